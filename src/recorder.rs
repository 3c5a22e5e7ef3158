//! The recorder: one call both steps the engine and durably records the
//! step, so the desktop app and the agent server cannot record differently.
//!
//! ```no_run
//! use std::sync::Arc;
//! use understudy::recorder::Recorder;
//! use understudy::store::{Actor, Store};
//! use understudy::{Action, World};
//!
//! let store = Arc::new(Store::open("/tmp/understudy.sqlite")?);
//! let world = Arc::new(World::load("fixtures/worlds/support-desk")?);
//! let mut rec = Recorder::start(store.clone(), world.clone(), "duplicate-charge", Actor::Expert { id: "e1".into() }, 0)?;
//! let step = rec.step(Action::message("Hello, I'm looking into it."), Some("Acknowledge first".into()))?;
//! rec.undo()?;                      // marks the step retracted; state rebuilt by replay
//! rec.redo()?;                      // takes it again as a new step (both are events)
//! rec.pause()?;                     // active time stops
//! rec.resume()?;
//! rec.submit(None)?;                // final message = the last message sent
//! // After a crash: Recorder::reopen(store, world, &id, false) rebuilds the state.
//! # Ok::<(), understudy::Error>(())
//! ```
//!
//! Lifecycle: `in_progress ⇄ paused → submitted | abandoned`, then a review
//! moves a submitted episode to `approved` or `rejected`.

use std::sync::Arc;
use std::time::Instant;

use crate::action::Action;
use crate::episode::{Changes, Episode, StepOutcome};
use crate::error::{Error, Result};
use crate::store::{self, Actor, EpisodeRecord, EpisodeStatus, EventKind, StepRecord, Store};
use crate::trajectory::Trajectory;
use crate::world::World;

/// Time spent working, excluding pauses. Wall time is fine here: it
/// describes the expert, not the world.
#[derive(Debug, Clone)]
struct ActiveClock {
    banked_ms: i64,
    since: Option<Instant>,
}

impl ActiveClock {
    fn now_ms(&self) -> i64 {
        self.banked_ms
            + self
                .since
                .map(|s| s.elapsed().as_millis() as i64)
                .unwrap_or(0)
    }
    fn stop(&mut self) {
        self.banked_ms = self.now_ms();
        self.since = None;
    }
    fn start(&mut self) {
        if self.since.is_none() {
            self.since = Some(Instant::now());
        }
    }
}

/// A recorded step as returned to the caller, after it is committed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecordedStep {
    /// The step as stored.
    pub record: StepRecord,
    /// What the engine returned, including its `info`, which the stored
    /// record does not keep.
    pub outcome: StepOutcome,
}

/// What can be done to an episode now, as its [`Recorder`] decides it:
/// front ends offer exactly these instead of deciding again. Each flag
/// says the call would change the episode; a call whose flag is false is
/// refused (`step`, after an episode closed or while paused), or does
/// nothing (`undo` with no kept step, `pause` when paused, `resume` when
/// running).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Transitions {
    /// [`Recorder::step`]: open, not paused, and the task has not ended.
    pub can_step: bool,
    /// [`Recorder::undo`]: open, with a kept step to retract (also after
    /// the task ended, which undoing the last step reopens).
    pub can_undo: bool,
    /// [`Recorder::redo`]: in progress, with a step undone since the last
    /// new step (and the task not ended).
    pub can_redo: bool,
    /// [`Recorder::pause`]: in progress.
    pub can_pause: bool,
    /// [`Recorder::resume`]: paused.
    pub can_resume: bool,
    /// [`Recorder::submit`]: open (in progress or paused).
    pub can_submit: bool,
    /// [`Recorder::abandon`]: open (in progress or paused).
    pub can_abandon: bool,
}

/// Records one episode.
pub struct Recorder {
    store: Arc<Store>,
    episode: Episode,
    /// What has been recorded so far, exactly as stored.
    trajectory: Trajectory,
    clock: ActiveClock,
    /// Steps undone since the last new step, the last undone on top: what
    /// [`Recorder::redo`] brings back. A new step empties it.
    redo: Vec<u32>,
}

impl Recorder {
    /// Starts a new episode of `task_id` and stores its header.
    pub fn start(
        store: Arc<Store>,
        world: Arc<World>,
        task_id: &str,
        actor: Actor,
        seed: u64,
    ) -> Result<Recorder> {
        Recorder::start_with(store, Episode::new(world)?, task_id, actor, seed)
    }

    /// As [`Recorder::start`], in an episode opened earlier (of the world to
    /// record in): reusing episodes skips opening their databases and keeps
    /// their prepared statements, which servers starting many episodes want.
    pub fn start_with(
        store: Arc<Store>,
        mut episode: Episode,
        task_id: &str,
        actor: Actor,
        seed: u64,
    ) -> Result<Recorder> {
        let world = Arc::clone(episode.world());
        episode.set_expert(actor.is_expert());
        episode.reset(task_id, seed)?;
        let record = EpisodeRecord::begin(
            &world.meta.id,
            &world.meta.version,
            &world.content_hash,
            task_id,
            seed,
            actor,
        );
        store.insert_episode(&record)?;
        Ok(Recorder {
            store,
            episode,
            trajectory: Trajectory {
                record,
                steps: Vec::new(),
            },
            clock: ActiveClock {
                banked_ms: 0,
                since: Some(Instant::now()),
            },
            redo: Vec::new(),
        })
    }

    /// Reopens a stored, still-open episode: rebuilds the world state by
    /// replaying its kept steps and checks each observation against the one
    /// recorded. Refuses if the world changed since, unless `force`.
    pub fn reopen(
        store: Arc<Store>,
        world: Arc<World>,
        episode_id: &str,
        force: bool,
    ) -> Result<Recorder> {
        let record = store.episode(episode_id)?;
        if !record.status.is_open() {
            return Err(Error::Conflict(format!(
                "episode {episode_id} is {}; only an episode in progress or paused can be resumed",
                record.status.as_str().replace('_', " ")
            )));
        }
        check_world(&record, &world, force)?;
        let steps = store.steps(episode_id)?;
        let mut episode = Episode::new(Arc::clone(&world))?;
        episode.set_expert(record.actor.is_expert());
        rebuild(&mut episode, &record, &steps, !force)?;
        let paused = record.status == EpisodeStatus::Paused;
        let redo = redo_stack(&store.events(episode_id)?, &steps);
        Ok(Recorder {
            store,
            episode,
            clock: ActiveClock {
                banked_ms: record.active_ms,
                since: (!paused).then(Instant::now),
            },
            trajectory: Trajectory { record, steps },
            redo,
        })
    }

    /// Applies `action` and records it. The step is committed before this
    /// returns; on a storage failure the world is rolled back to match.
    pub fn step(&mut self, action: Action, rationale: Option<String>) -> Result<RecordedStep> {
        self.require_open()?;
        if self.trajectory.record.status == EpisodeStatus::Paused {
            return Err(Error::Conflict(
                "the episode is paused; resume it first".into(),
            ));
        }
        let outcome = self.episode.step(&action)?;
        let record = StepRecord {
            idx: self.trajectory.steps.len() as u32,
            action,
            observation: outcome.observation.clone(),
            terminated: outcome.terminated,
            truncated: outcome.truncated,
            wall_at: store::now(),
            active_ms: self.clock.now_ms(),
            rationale: rationale.filter(|r| !r.trim().is_empty()),
            flag: None,
            retracted: false,
            retracted_at: None,
        };
        if let Err(e) = self.store.append_step(&self.trajectory.record.id, &record) {
            // Keep memory and disk in agreement: the step never happened.
            rebuild(
                &mut self.episode,
                &self.trajectory.record,
                &self.trajectory.steps,
                false,
            )?;
            return Err(e);
        }
        self.trajectory.record.active_ms = record.active_ms;
        self.trajectory.steps.push(record.clone());
        self.redo.clear();
        Ok(RecordedStep { record, outcome })
    }

    /// Hands the episode the customer's reply to the next message (see
    /// [`Episode::set_next_reply`]); the reply is then recorded like any
    /// other observation.
    pub fn set_next_reply(&mut self, reply: Option<String>) {
        self.episode.set_next_reply(reply);
    }

    /// Sets the rationale ("why I did this") and flag of step `idx`.
    pub fn annotate(
        &mut self,
        idx: u32,
        rationale: Option<String>,
        flag: Option<String>,
    ) -> Result<()> {
        let step = self
            .trajectory
            .steps
            .get_mut(idx as usize)
            .ok_or_else(|| Error::NotFound(format!("step {idx}")))?;
        self.store.annotate_step(
            &self.trajectory.record.id,
            idx,
            rationale.as_deref(),
            flag.as_deref(),
        )?;
        let rationale = rationale.filter(|r| !r.trim().is_empty());
        let flag = flag.filter(|f| !f.trim().is_empty());
        if step.rationale != rationale || step.flag != flag {
            // The edit is an event with the text before and after: a why
            // rewritten later is not the why given at the time.
            let detail = serde_json::json!({
                "step": idx,
                "before": {"rationale": step.rationale, "flag": step.flag},
                "after": {"rationale": rationale, "flag": flag},
            });
            step.rationale = rationale;
            step.flag = flag;
            self.store.add_event(
                &self.trajectory.record.id,
                EventKind::Annotated,
                &detail,
                self.clock.now_ms(),
            )?;
        }
        Ok(())
    }

    /// Records which client opened the episode (e.g. `understudy-app
    /// 0.3.1`), with the engine's version, so every episode says what
    /// recorded it. Call on start and on every reopen.
    pub fn opened_by(&mut self, client: &str) -> Result<()> {
        let detail = serde_json::json!({
            "client": client,
            "engine": env!("CARGO_PKG_VERSION"),
        });
        self.event(EventKind::Opened, detail)
    }

    /// Saves the active time so far without a step: a crash then loses at
    /// most the time since the last checkpoint.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.require_open()?;
        let active = self.clock.now_ms();
        self.store
            .save_active_time(&self.trajectory.record.id, active)?;
        self.trajectory.record.active_ms = active;
        Ok(())
    }

    fn event(&self, kind: EventKind, detail: serde_json::Value) -> Result<()> {
        self.store.add_event(
            &self.trajectory.record.id,
            kind,
            &detail,
            self.clock.now_ms(),
        )
    }

    /// Undoes the last kept step: it is marked retracted (never deleted) and
    /// the world is rebuilt by replaying the steps that remain.
    pub fn undo(&mut self) -> Result<Option<u32>> {
        self.require_open()?;
        let Some(last) = self.trajectory.kept_steps().next_back().map(|s| s.idx) else {
            return Ok(None);
        };
        self.store.retract_step(&self.trajectory.record.id, last)?;
        if let Some(s) = self.trajectory.steps.get_mut(last as usize) {
            s.retracted = true;
            s.retracted_at = Some(store::now());
        }
        rebuild(
            &mut self.episode,
            &self.trajectory.record,
            &self.trajectory.steps,
            false,
        )?;
        self.redo.push(last);
        let steps = self.trajectory.steps.len();
        self.event(
            EventKind::Undone,
            serde_json::json!({"step": last, "steps": steps}),
        )?;
        Ok(Some(last))
    }

    /// Does the last undone step again, if no new step came since: its
    /// action is taken again, with its why, as a new step (the undone one
    /// stays undone: nothing recorded is taken back, which is also what a
    /// team hub accepts). The world is in the state the step was first
    /// taken in, so the engine gives it the same result. Returns the new
    /// step's index, or `None` with nothing to redo.
    pub fn redo(&mut self) -> Result<Option<u32>> {
        self.require_open()?;
        let Some(undone) = self.redo.last().copied() else {
            return Ok(None);
        };
        let Some(step) = self.trajectory.steps.get(undone as usize).cloned() else {
            self.redo.clear();
            return Ok(None);
        };
        let mut rest = std::mem::take(&mut self.redo);
        rest.pop();
        let taken = match self.step(step.action, step.rationale) {
            Ok(taken) => taken,
            Err(e) => {
                rest.push(undone);
                self.redo = rest;
                return Err(e);
            }
        };
        self.redo = rest;
        let steps = self.trajectory.steps.len();
        self.event(
            EventKind::Redone,
            serde_json::json!({"step": taken.record.idx, "of": undone, "steps": steps}),
        )?;
        Ok(Some(taken.record.idx))
    }

    /// Stops the active clock and marks the episode paused; steps are
    /// refused until [`Recorder::resume`].
    pub fn pause(&mut self) -> Result<()> {
        self.require_open()?;
        self.clock.stop();
        self.set_status(EpisodeStatus::Paused, None)?;
        self.event(EventKind::Paused, serde_json::json!({}))
    }

    /// Restarts the active clock and marks the episode in progress.
    pub fn resume(&mut self) -> Result<()> {
        self.require_open()?;
        self.clock.start();
        self.set_status(EpisodeStatus::InProgress, None)?;
        self.event(EventKind::Resumed, serde_json::json!({}))
    }

    /// Submits the episode. The final message defaults to the last message
    /// sent to the customer.
    pub fn submit(&mut self, final_message: Option<String>) -> Result<()> {
        self.require_open()?;
        let message = final_message.or_else(|| self.last_message());
        self.clock.stop();
        self.set_status(EpisodeStatus::Submitted, message)
    }

    /// Gives the episode up (it stays in the store, marked abandoned).
    pub fn abandon(&mut self) -> Result<()> {
        self.require_open()?;
        self.clock.stop();
        self.set_status(EpisodeStatus::Abandoned, None)
    }

    fn set_status(&mut self, status: EpisodeStatus, final_message: Option<String>) -> Result<()> {
        let active = self.clock.now_ms();
        self.store.update_episode(
            &self.trajectory.record.id,
            status,
            active,
            final_message.as_deref(),
        )?;
        self.trajectory.record.status = status;
        self.trajectory.record.active_ms = active;
        if status == EpisodeStatus::Submitted {
            self.trajectory.record.submitted_at = Some(store::now());
        }
        if final_message.is_some() {
            self.trajectory.record.final_message = final_message;
        }
        Ok(())
    }

    fn require_open(&self) -> Result<()> {
        if self.trajectory.record.status.is_open() {
            Ok(())
        } else {
            Err(Error::Conflict(format!(
                "the episode is {}; it can no longer change",
                self.trajectory.record.status.as_str().replace('_', " ")
            )))
        }
    }

    fn last_message(&self) -> Option<String> {
        self.trajectory
            .kept_steps()
            .rev()
            .find_map(|s| match &s.action {
                Action::Message { message } => Some(message.clone()),
                _ => None,
            })
    }

    /// The episode's header as stored, kept up to date by every call.
    pub fn record(&self) -> &EpisodeRecord {
        &self.trajectory.record
    }

    /// The episode so far: its header and every step.
    pub fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    /// Every step, retracted ones included.
    pub fn steps(&self) -> &[StepRecord] {
        &self.trajectory.steps
    }

    /// The live episode, for reading its state (stepping goes through
    /// [`Recorder::step`], so that every step is recorded).
    pub fn episode(&self) -> &Episode {
        &self.episode
    }

    /// Gives the episode back for reuse (see [`Recorder::start_with`]).
    pub fn into_episode(self) -> Episode {
        self.episode
    }

    /// The world's state diff against the seed, after the kept steps.
    pub fn changes(&self) -> Result<Changes> {
        self.episode.changes()
    }

    /// Time worked so far, pauses excluded, in milliseconds; it runs on
    /// between steps, unlike the stored `active_ms`.
    pub fn active_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The task ended or hit its step limit: further steps are refused
    /// until the last one is undone.
    pub fn is_done(&self) -> bool {
        self.episode.is_done()
    }

    /// Which calls would change the episode now (see [`Transitions`]).
    pub fn transitions(&self) -> Transitions {
        let status = self.trajectory.record.status;
        let open = status.is_open();
        Transitions {
            can_step: status == EpisodeStatus::InProgress && !self.is_done(),
            can_undo: open && self.trajectory.kept_steps().next().is_some(),
            can_redo: status == EpisodeStatus::InProgress
                && !self.is_done()
                && !self.redo.is_empty(),
            can_pause: status == EpisodeStatus::InProgress,
            can_resume: status == EpisodeStatus::Paused,
            can_submit: open,
            can_abandon: open,
        }
    }
}

/// Refuses a changed world unless forced: an episode recorded in another
/// world is always refused, one whose world's content hash differs only
/// without `force`. Replaying on a changed world could give a different
/// trajectory, so reopening and stored replay check this first.
pub fn check_world(record: &EpisodeRecord, world: &World, force: bool) -> Result<()> {
    if record.world_id != world.meta.id {
        return Err(Error::WorldChanged(format!(
            "episode {} was recorded in world `{}`, not `{}`",
            record.id, record.world_id, world.meta.id
        )));
    }
    if record.world_hash != world.content_hash && !force {
        return Err(Error::WorldChanged(format!(
            "world `{}` has changed since episode {} was recorded (version {} then, {} now); replaying it could give a different trajectory. Use --force to replay anyway",
            world.meta.id, record.id, record.world_version, world.meta.version
        )));
    }
    Ok(())
}

/// Resets `episode` and replays the kept steps. With `verify`, each
/// observation must equal the recorded one.
/// What redo can bring back after a restart, from the episode's events:
/// each undo pushes its step and each redo pops one; a step taken between
/// them (the step count differs from the last undo's or redo's) ends
/// redo, as it does while recording. Undos recorded before redo existed
/// say no step count, so they are not redone.
fn redo_stack(events: &[store::EpisodeEvent], steps: &[StepRecord]) -> Vec<u32> {
    let mut stack: Vec<u32> = Vec::new();
    let mut known: Option<u64> = None;
    for e in events {
        let count = e.detail.get("steps").and_then(|v| v.as_u64());
        match e.kind {
            EventKind::Undone => {
                if count.is_none() || count != known {
                    stack.clear();
                }
                if let (Some(step), Some(_)) =
                    (e.detail.get("step").and_then(|v| v.as_u64()), count)
                {
                    stack.push(step as u32);
                }
                known = count;
            }
            EventKind::Redone => {
                stack.pop();
                known = count;
            }
            _ => {}
        }
    }
    if known != Some(steps.len() as u64) {
        stack.clear();
    }
    stack.retain(|s| steps.get(*s as usize).is_some_and(|s| s.retracted));
    stack
}

fn rebuild(
    episode: &mut Episode,
    record: &EpisodeRecord,
    steps: &[StepRecord],
    verify: bool,
) -> Result<()> {
    episode.reset(&record.task_id, record.seed)?;
    for step in steps.iter().filter(|s| !s.retracted) {
        let out = episode.step(&step.action)?;
        if verify && out.observation != step.observation {
            return Err(Error::WorldChanged(format!(
                "replaying episode {} diverged at step {}: recorded {:?}, got {:?}",
                record.id, step.idx, step.observation.text, out.observation.text
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn recorder(dir: &std::path::Path) -> Recorder {
        let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/worlds/mini");
        let world = Arc::new(World::load(world).expect("the mini world loads"));
        let store = Arc::new(Store::open(dir.join("store.sqlite")).expect("store opens"));
        let actor = Actor::Expert { id: "e1".into() };
        Recorder::start(store, world, "pay-back", actor, 0).expect("episode starts")
    }

    /// A step whose commit fails is not acknowledged: the caller gets the
    /// error, the recorder keeps no trace of it, and the next step takes
    /// its place.
    #[test]
    fn a_step_whose_commit_fails_is_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = recorder(dir.path());
        let store = Arc::clone(&rec.store);
        store.with_connection(|c| c.commit_hook(Some(|| true)).expect("hook"));
        let action = Action::tool("get_account", serde_json::json!({"account_id": "A-1"}));
        let err = rec.step(action.clone(), None).expect_err("commit refused");
        assert!(err.to_string().contains("it was not recorded"), "{err}");
        assert!(rec.steps().is_empty(), "the recorder keeps no trace of it");
        let id = rec.record().id.clone();
        assert!(store.steps(&id).unwrap().is_empty(), "nor does the store");
        store.with_connection(|c| c.commit_hook(None::<fn() -> bool>).expect("unhook"));
        let step = rec
            .step(action, None)
            .expect("recorded once the store works");
        assert_eq!(step.record.idx, 0);
        assert_eq!(store.steps(&id).unwrap().len(), 1);
    }

    /// Every flag agrees with what the call it stands for does.
    #[test]
    fn transitions_say_what_the_recorder_accepts() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = recorder(dir.path());
        let fresh = rec.transitions();
        assert!(fresh.can_step && fresh.can_pause && fresh.can_submit && fresh.can_abandon);
        assert!(!fresh.can_undo && !fresh.can_resume);
        assert_eq!(rec.undo().unwrap(), None, "nothing to undo");

        rec.step(Action::message("Looking into it."), None).unwrap();
        assert!(rec.transitions().can_undo && !rec.transitions().can_redo);
        rec.undo().unwrap();
        assert!(rec.transitions().can_redo);
        assert_eq!(rec.redo().unwrap(), Some(1), "taken again as a new step");
        assert!(!rec.transitions().can_redo);

        rec.pause().unwrap();
        let paused = rec.transitions();
        assert!(!paused.can_step && !paused.can_pause && paused.can_resume);
        assert!(paused.can_submit && paused.can_abandon && paused.can_undo);
        assert!(rec.step(Action::message("hello?"), None).is_err());
        rec.resume().unwrap();

        rec.step(Action::tool("close", serde_json::json!({})), None)
            .unwrap();
        assert!(rec.is_done());
        let ended = rec.transitions();
        assert!(!ended.can_step && ended.can_undo && ended.can_submit);
        assert!(rec.step(Action::message("one more"), None).is_err());

        rec.submit(None).unwrap();
        let closed = rec.transitions();
        assert_eq!(
            closed,
            Transitions {
                can_step: false,
                can_undo: false,
                can_redo: false,
                can_pause: false,
                can_resume: false,
                can_submit: false,
                can_abandon: false,
            }
        );
        assert!(rec.undo().is_err() && rec.pause().is_err() && rec.abandon().is_err());
        assert!(rec.redo().is_err());
    }
}
