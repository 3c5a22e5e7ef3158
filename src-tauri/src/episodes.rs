//! Episodes: start, act, annotate, undo, pause, review, submit, discard.
//!
//! Every command that changes an episode goes through the engine's
//! recorder, which commits to the store before it returns.

use serde::Serialize;
use serde_json::Value;
use tauri::State;
use ts_rs::TS;
use understudy::observation::ObservationError;
use understudy::recorder::{Recorder, Transitions};
use understudy::store::{Draft, EpisodeRecord, EpisodeStatus, StepRecord};
use understudy::Action;

use crate::error::AppResult;
use crate::ipc::command;
use crate::review::ReviewView;
use crate::worlds::{TaskBrief, ToolInfo, WorldSummary};
use crate::AppState;

/// One recorded step, as the timeline shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct StepView {
    /// Position in the log, undone steps included.
    pub idx: u32,
    pub action: Action,
    pub ok: bool,
    /// The result as text (for a message: the customer's reply). Empty
    /// when it would only be `content` written as JSON (a listing, a
    /// record): the window shows the data, so it is not sent, and held,
    /// twice.
    pub text: String,
    /// The result as data: rows, a record, a listing.
    #[ts(type = "unknown")]
    pub content: Value,
    /// Why it failed; for arguments that break the tool's schema, with the
    /// problems as data (`problems`).
    pub error: Option<ObservationError>,
    /// The task ended with this step.
    pub terminated: bool,
    /// The step limit was reached with this step.
    pub truncated: bool,
    /// When it was recorded (wall clock, RFC 3339).
    pub wall_at: String,
    /// Working time into the episode, pauses excluded.
    #[ts(type = "number")]
    pub active_ms: i64,
    pub rationale: Option<String>,
    pub flag: Option<String>,
    /// Undone: kept in the record, marked as retracted.
    pub retracted: bool,
}

/// `text`, or nothing when it is the JSON of `content` (an object or a
/// list), which the window renders from `content` itself.
fn text_unless_data(text: &str, content: &Value) -> String {
    let data = matches!(content, Value::Object(_) | Value::Array(_))
        && matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
        && serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == content);
    if data {
        String::new()
    } else {
        text.to_string()
    }
}

impl StepView {
    pub fn new(s: &StepRecord) -> StepView {
        StepView {
            idx: s.idx,
            action: s.action.clone(),
            ok: s.observation.ok,
            text: text_unless_data(&s.observation.text, &s.observation.content),
            content: s.observation.content.clone(),
            error: s.observation.error.clone(),
            terminated: s.terminated,
            truncated: s.truncated,
            wall_at: s.wall_at.clone(),
            active_ms: s.active_ms,
            rationale: s.rationale.clone(),
            flag: s.flag.clone(),
            retracted: s.retracted,
        }
    }
}

/// What `run_action` returns: the recorded step, and the episode after it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct StepTaken {
    pub step: StepView,
    /// The task has ended (a closing tool succeeded, or the step limit).
    pub done: bool,
    /// What can be done next, as the recorder decides it.
    pub transitions: Transitions,
}

impl StepTaken {
    pub fn new(step: &StepRecord, r: &Recorder) -> StepTaken {
        StepTaken {
            step: StepView::new(step),
            done: r.is_done(),
            transitions: r.transitions(),
        }
    }
}

/// An episode, whole: what the workspace needs to draw it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct EpisodeView {
    pub id: String,
    pub world_id: String,
    pub world_name: String,
    pub task: TaskBrief,
    pub status: EpisodeStatus,
    /// Working time so far, pauses excluded.
    #[ts(type = "number")]
    pub active_ms: i64,
    /// The task has ended (a closing tool succeeded, or the step limit).
    pub done: bool,
    /// What can be done now, as the recorder decides it.
    pub transitions: Transitions,
    pub steps: Vec<StepView>,
    /// The tools this task allows the expert, views' read tools included
    /// (those of the views only experts see too).
    pub tools: Vec<ToolInfo>,
    pub final_message: Option<String>,
    pub created_at: String,
    /// What the expert had typed and not sent when the episode was last
    /// open (a message, a tool form, a why), to put back where it was.
    pub drafts: Vec<Draft>,
}

impl EpisodeView {
    pub fn new(r: &Recorder) -> EpisodeView {
        let world = r.episode().world();
        let record = r.record();
        EpisodeView {
            id: record.id.clone(),
            world_id: record.world_id.clone(),
            world_name: world.meta.name.clone(),
            task: TaskBrief::new(r.episode().task(), &r.episode().world().meta.user),
            status: record.status,
            active_ms: r.active_ms(),
            done: r.is_done(),
            transitions: r.transitions(),
            steps: r.steps().iter().map(StepView::new).collect(),
            tools: world
                .expert_task_tool_specs(r.episode().task())
                .into_iter()
                .map(ToolInfo::new)
                .collect(),
            final_message: record.final_message.clone(),
            created_at: record.created_at.clone(),
            drafts: Vec::new(),
        }
    }
}

/// An episode on the start screen's "continue" list.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct EpisodeSummary {
    pub id: String,
    pub world_id: String,
    pub world_name: String,
    pub task_id: String,
    pub task_title: String,
    pub status: EpisodeStatus,
    /// Steps kept (undone ones left out).
    pub steps: u32,
    #[ts(type = "number")]
    pub active_ms: i64,
    pub updated_at: String,
}

impl EpisodeSummary {
    /// `world` is the world's listing, when the app still offers it; else
    /// the episode is named by its ids.
    pub fn new(
        e: &EpisodeRecord,
        world: Option<&WorldSummary>,
        steps: &[StepRecord],
    ) -> EpisodeSummary {
        EpisodeSummary {
            id: e.id.clone(),
            world_id: e.world_id.clone(),
            world_name: world
                .map(|w| w.name.clone())
                .unwrap_or_else(|| e.world_id.clone()),
            task_id: e.task_id.clone(),
            task_title: world
                .and_then(|w| w.tasks.iter().find(|t| t.id == e.task_id))
                .map(|t| t.title.clone())
                .unwrap_or_else(|| e.task_id.clone()),
            status: e.status,
            steps: steps.iter().filter(|s| !s.retracted).count() as u32,
            active_ms: e.active_ms,
            updated_at: e.updated_at.clone(),
        }
    }
}

command! {
    /// Starts a new episode of a task, for the current expert.
    #[tauri::command(async)]
    pub fn start_episode(
        state: State<'_, AppState>,
        world_id: String,
        task_id: String,
    ) -> AppResult<EpisodeView> {
        state.service()?.start(&world_id, &task_id)
    }
}

command! {
    /// Opens an episode; after a crash this rebuilds it exactly by replay.
    #[tauri::command(async)]
    pub fn open_episode(state: State<'_, AppState>, episode_id: String) -> AppResult<EpisodeView> {
        state.service()?.episode(&episode_id)
    }
}

command! {
    /// Performs one action. Returns only once the step is durably recorded.
    #[tauri::command(async)]
    pub fn run_action(
        state: State<'_, AppState>,
        episode_id: String,
        action: Action,
        rationale: Option<String>,
    ) -> AppResult<StepTaken> {
        state.service()?.step(&episode_id, action, rationale)
    }
}

command! {
    /// Sets the "why I did this" and the flag of one step (`null` clears).
    #[tauri::command(async)]
    pub fn annotate_step(
        state: State<'_, AppState>,
        episode_id: String,
        idx: u32,
        rationale: Option<String>,
        flag: Option<String>,
    ) -> AppResult<()> {
        state.service()?.annotate(&episode_id, idx, rationale, flag)
    }
}

command! {
    /// Does the last undone action again (recorded as an event); only while
    /// no new action came since.
    #[tauri::command(async)]
    pub fn redo_action(state: State<'_, AppState>, episode_id: String) -> AppResult<EpisodeView> {
        state.service()?.redo(&episode_id)
    }
}

command! {
    /// Undoes the last kept action: recorded as retracted, world rebuilt.
    #[tauri::command(async)]
    pub fn undo_action(state: State<'_, AppState>, episode_id: String) -> AppResult<EpisodeView> {
        state.service()?.undo(&episode_id)
    }
}

command! {
    /// Pauses the episode: its working time stops.
    #[tauri::command(async)]
    pub fn pause_episode(state: State<'_, AppState>, episode_id: String) -> AppResult<EpisodeView> {
        state.service()?.pause(&episode_id)
    }
}

command! {
    /// Resumes a paused episode.
    #[tauri::command(async)]
    pub fn resume_episode(state: State<'_, AppState>, episode_id: String) -> AppResult<EpisodeView> {
        state.service()?.resume(&episode_id)
    }
}

command! {
    /// What changed in the world, and the final message, before submitting.
    #[tauri::command(async)]
    pub fn review_episode(state: State<'_, AppState>, episode_id: String) -> AppResult<ReviewView> {
        state.service()?.review(&episode_id)
    }
}

command! {
    /// Submits the episode; the final message defaults to the last one sent.
    #[tauri::command(async)]
    pub fn submit_episode(
        state: State<'_, AppState>,
        episode_id: String,
        final_message: Option<String>,
    ) -> AppResult<EpisodeView> {
        state.service()?.submit(&episode_id, final_message)
    }
}

command! {
    /// Gives the episode up; it stays in the store, marked abandoned.
    #[tauri::command(async)]
    pub fn discard_episode(state: State<'_, AppState>, episode_id: String) -> AppResult<()> {
        state.service()?.abandon(&episode_id)
    }
}

command! {
    /// Discards the episode and starts the same task again.
    #[tauri::command(async)]
    pub fn restart_episode(state: State<'_, AppState>, episode_id: String) -> AppResult<EpisodeView> {
        state.service()?.restart(&episode_id)
    }
}

command! {
    /// Saves what the expert is typing (a message, a tool form as JSON, a
    /// why) under `slot`, and the working time so far; empty text clears
    /// the slot. Committed before it returns, so a crash loses none of it.
    #[tauri::command(async)]
    pub fn save_draft(
        state: State<'_, AppState>,
        episode_id: String,
        slot: String,
        text: String,
    ) -> AppResult<()> {
        state.service()?.save_draft(&episode_id, &slot, &text)
    }
}

command! {
    /// Saves the working time so far (the window calls it every few
    /// seconds while recording), so a crash loses at most that much.
    #[tauri::command(async)]
    pub fn checkpoint_episode(state: State<'_, AppState>, episode_id: String) -> AppResult<()> {
        state.service()?.checkpoint(&episode_id)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::text_unless_data;

    #[test]
    fn a_result_that_is_only_its_data_is_not_sent_twice() {
        let listing =
            json!({"columns": ["id"], "rows": [{"id": "A-1", "balance": 100.0}], "total": 1});
        let text = r#"{"columns": ["id"], "rows": [{"id": "A-1", "balance": 100.0}], "total": 1}"#;
        assert_eq!(text_unless_data(text, &listing), "");
        // A rendering of its own (a template) stays, and so does text that
        // is not exactly the data.
        let said = "Refund RF-1 of $79.00 issued on INV-24073.";
        assert_eq!(text_unless_data(said, &json!({"id": "RF-1"})), said);
        let other = r#"{"total": 2}"#;
        assert_eq!(text_unless_data(other, &json!({"total": 1})), other);
        assert_eq!(
            text_unless_data("[1]", &json!("[1]")),
            "[1]",
            "a string result is its text"
        );
    }
}
