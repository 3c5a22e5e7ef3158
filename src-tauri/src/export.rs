//! The export dialog: what can be chosen (formats, worlds, tasks, experts,
//! statuses), how many recordings the filters pick, and the export itself
//! with its progress. The work is the engine's
//! ([`understudy::export::export_store`]), the same as `understudy
//! export --store … --worlds …`, so the app writes the same bytes as the
//! command line for the same filters.
//!
//! Where the file goes is chosen in the system's save dialog by the
//! window, or typed into the dialog's destination field (which is also
//! how a keyboard user pastes a location, and what the window tests may
//! do where the system's dialog is out of WebDriver's reach).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use tauri::{Emitter, Manager};
use ts_rs::TS;
use understudy::export::{self, ExportProgress, ExportRequest, Format};
use understudy::store::{Actor, EpisodeFilter, EpisodeStatus};

use crate::error::{AppError, AppResult};
use crate::ipc::command;
use crate::service::Service;
use crate::AppState;

/// The event a running export sends after every recording.
pub const EXPORT_PROGRESS_EVENT: &str = "export-progress";

/// One choice in a list: its value and what people read.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// A format, with what it is for in plain words.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct FormatChoice {
    pub format: Format,
    pub label: String,
    pub description: String,
    /// It is a folder, not a file.
    pub folder: bool,
    /// The file name offered in the save dialog.
    pub suggested_name: String,
}

/// A task, under its world.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct TaskChoice {
    pub world_id: String,
    pub task_id: String,
    pub title: String,
}

/// What the export dialog offers.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ExportChoices {
    pub formats: Vec<FormatChoice>,
    /// Worlds with recordings.
    pub worlds: Vec<Choice>,
    /// Tasks with recordings.
    pub tasks: Vec<TaskChoice>,
    /// Experts with recordings.
    pub experts: Vec<Choice>,
    /// Every status, in plain words.
    pub statuses: Vec<Choice>,
    /// Recordings in the store, in all.
    pub total: u32,
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ExportDone {
    /// The file or folder written.
    pub path: String,
    pub format: Format,
    /// Recordings written.
    pub episodes: u32,
    /// Their steps.
    pub steps: u32,
    /// Files written (several for a dataset folder).
    pub files: Vec<String>,
    /// Recordings left out (nothing to train on), counted in `warnings`.
    pub left_out: u32,
    /// What did not stop the export, in the engine's words.
    pub warnings: Vec<String>,
}

/// A running export's progress, for the window.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ExportProgressEvent {
    /// Which export (the window's own name for it).
    pub job: String,
    pub done: u32,
    pub total: u32,
}

fn formats() -> Vec<FormatChoice> {
    let f = |format, label: &str, description: &str, folder, name: &str| FormatChoice {
        format,
        label: label.into(),
        description: description.into(),
        folder,
        suggested_name: name.into(),
    };
    vec![
        f(
            Format::Trl,
            "Training conversations (Hugging Face / TRL)",
            "One conversation per recording, with the tools and the reward: what fine-tuning with TRL reads.",
            false,
            "understudy-trl.jsonl",
        ),
        f(
            Format::OpenAi,
            "Training conversations (OpenAI)",
            "One conversation per recording in OpenAI's fine-tuning format.",
            false,
            "understudy-openai.jsonl",
        ),
        f(
            Format::Folder,
            "Dataset folder",
            "A folder with the conversations in parts, a description and checksums, ready to share or load with the datasets library.",
            true,
            "understudy-dataset",
        ),
        f(
            Format::Native,
            "Full backup (Understudy)",
            "Everything recorded, undone steps and reviews included; another Understudy can import it.",
            false,
            "understudy-episodes.jsonl",
        ),
    ]
}

/// A status as people say it.
fn status_label(s: EpisodeStatus) -> &'static str {
    match s {
        EpisodeStatus::Approved => "Approved (gold)",
        EpisodeStatus::Submitted => "Waiting for review",
        EpisodeStatus::Rejected => "Returned to the expert",
        EpisodeStatus::InProgress => "Being recorded",
        EpisodeStatus::Paused => "Paused",
        EpisodeStatus::Abandoned => "Discarded",
    }
}

const STATUSES: [EpisodeStatus; 6] = [
    EpisodeStatus::Approved,
    EpisodeStatus::Submitted,
    EpisodeStatus::Rejected,
    EpisodeStatus::InProgress,
    EpisodeStatus::Paused,
    EpisodeStatus::Abandoned,
];

/// What the dialog offers, from the store's recordings.
pub fn choices(service: &Service) -> AppResult<ExportChoices> {
    let episodes = service.store().episodes(&EpisodeFilter::default())?;
    let mut worlds: BTreeMap<String, String> = BTreeMap::new();
    let mut tasks: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut experts: BTreeMap<String, String> = BTreeMap::new();
    let names: BTreeMap<String, String> = service
        .experts()?
        .into_iter()
        .map(|e| (e.id, e.name))
        .collect();
    for e in &episodes {
        let world = service.world(&e.world_id).ok();
        worlds.entry(e.world_id.clone()).or_insert_with(|| {
            world
                .as_ref()
                .map(|w| w.meta.name.clone())
                .unwrap_or_else(|| e.world_id.clone())
        });
        tasks
            .entry((e.world_id.clone(), e.task_id.clone()))
            .or_insert_with(|| {
                world
                    .as_ref()
                    .and_then(|w| w.task(&e.task_id))
                    .map(|t| t.title.clone())
                    .unwrap_or_else(|| e.task_id.clone())
            });
        if let Actor::Expert { id } = &e.actor {
            experts
                .entry(id.clone())
                .or_insert_with(|| names.get(id).cloned().unwrap_or_else(|| id.clone()));
        }
    }
    let choice = |(value, label): (String, String)| Choice { value, label };
    let mut experts: Vec<Choice> = experts.into_iter().map(choice).collect();
    experts.sort_by(|a, b| a.label.cmp(&b.label));
    Ok(ExportChoices {
        formats: formats(),
        worlds: worlds.into_iter().map(choice).collect(),
        tasks: tasks
            .into_iter()
            .map(|((world_id, task_id), title)| TaskChoice {
                world_id,
                task_id,
                title,
            })
            .collect(),
        experts,
        statuses: STATUSES
            .iter()
            .map(|s| Choice {
                value: s.as_str().into(),
                label: status_label(*s).into(),
            })
            .collect(),
        total: episodes.len() as u32,
    })
}

/// The engine's options for `request`, its complaints as the app's.
fn options(request: &ExportRequest) -> AppResult<export::ExportOptions> {
    request
        .options()
        .map_err(|e| AppError::new("invalid_input", e.to_string()))
}

/// How many recordings `request`'s filters pick.
pub fn count(service: &Service, request: &ExportRequest) -> AppResult<u32> {
    Ok(export::count_matching(service.store(), &options(request)?)? as u32)
}

/// Checks a destination before anything is written, in plain words.
fn destination(output: &str, format: Format) -> AppResult<PathBuf> {
    let output = output.trim();
    if output.is_empty() {
        return Err(AppError::new(
            "invalid_input",
            "Choose where to save the export first.",
        ));
    }
    let path = PathBuf::from(output);
    if !path.is_absolute() {
        return Err(AppError::new(
            "invalid_input",
            format!("\"{output}\" is not a full location; choose one with Choose… or type one starting with /."),
        ));
    }
    match path.parent() {
        Some(parent) if parent.is_dir() => {}
        _ => {
            return Err(AppError::new(
                "invalid_input",
                format!("The folder for \"{output}\" does not exist."),
            ))
        }
    }
    if format != Format::Folder && path.is_dir() {
        return Err(AppError::new(
            "invalid_input",
            format!("\"{output}\" is a folder; this format is one file. Choose a file name."),
        ));
    }
    if format == Format::Folder && path.is_file() {
        return Err(AppError::new(
            "invalid_input",
            format!("\"{output}\" is a file; a dataset folder needs a folder name."),
        ));
    }
    Ok(path)
}

/// Exports to `output`, telling `progress` after every recording.
pub fn run(
    service: &Service,
    request: &ExportRequest,
    output: &str,
    progress: &dyn Fn(ExportProgress),
) -> AppResult<ExportDone> {
    let options = options(request)?;
    let path = destination(output, request.format)?;
    let worlds = service.worlds_dir().ok_or_else(|| {
        AppError::new(
            "no_worlds",
            "The app cannot find its worlds folder, which the training formats need. Start it with --worlds-dir.",
        )
    })?;
    let summary = export::export_store(service.store(), worlds, &options, &path, progress)
        .map_err(|e| {
            AppError::new(
                "export_failed",
                "The export could not be written; nothing was saved.",
            )
            .with_detail(e.to_string())
        })?;
    Ok(ExportDone {
        path: path.display().to_string(),
        format: request.format,
        episodes: summary.episodes as u32,
        steps: summary.steps as u32,
        files: summary
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect(),
        left_out: summary.left_out as u32,
        warnings: summary.warnings,
    })
}

command! {
    /// What the export dialog offers: formats, and the worlds, tasks,
    /// experts and statuses of the store's recordings.
    #[tauri::command(async)]
    pub fn export_choices(state: tauri::State<'_, AppState>) -> AppResult<ExportChoices> {
        choices(state.service()?)
    }
}

command! {
    /// How many recordings the filters pick.
    #[tauri::command(async)]
    pub fn export_count(state: tauri::State<'_, AppState>, request: ExportRequest) -> AppResult<u32> {
        count(state.service()?, &request)
    }
}

command! {
    /// Exports the recordings the filters pick to `output` (a file, or a
    /// folder for the dataset folder), sending `{ job, done, total }` on the
    /// `export-progress` event after every recording. The file appears
    /// only when complete.
    #[tauri::command(async)]
    pub fn export_dataset(window: tauri::Window, request: ExportRequest, output: String, job: String) -> AppResult<ExportDone> {
        let state = window.state::<AppState>();
        let progress = |p: ExportProgress| {
            let _ = window.emit(
                EXPORT_PROGRESS_EVENT,
                ExportProgressEvent {
                    job: job.clone(),
                    done: p.done,
                    total: p.total,
                },
            );
        };
        run(state.service()?, &request, &output, &progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{profile, service};
    use std::cell::RefCell;
    use understudy::export::{ExportOptions, Filter, Source, WorldSet};
    use understudy::store::Decision;

    /// A service whose store has two submitted support-desk recordings by
    /// Ana, one approved by Ben.
    fn recorded(dir: &std::path::Path) -> (Service, String) {
        let s = service(dir);
        let ana = profile(&s, "Ana");
        let world = s.world("support-desk").unwrap();
        let mut ids = Vec::new();
        for _ in 0..2 {
            let ep = s.start("support-desk", "cancel-no-refund").unwrap();
            let task = world.task("cancel-no-refund").unwrap();
            for a in &task.solution {
                let action = understudy::Action::from_json(a).unwrap();
                if s.step(&ep.id, action, None).is_err() {
                    break;
                }
            }
            s.submit(&ep.id, None).unwrap();
            ids.push(ep.id);
        }
        let ben = profile(&s, "Ben");
        s.store()
            .add_expert_review(&ids[0], &ben, Decision::Approve, "")
            .unwrap();
        (s, ana)
    }

    #[test]
    fn the_dialog_writes_what_the_engine_writes_with_progress_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        let (s, ana) = recorded(dir.path());
        let c = choices(&s).unwrap();
        assert_eq!(c.total, 2);
        assert_eq!(c.worlds.len(), 1);
        assert_eq!(c.tasks[0].task_id, "cancel-no-refund");
        assert_eq!(c.experts[0].label, "Ana");
        assert_eq!(c.formats.len(), 4);
        assert!(c.statuses.iter().any(|s| s.label == "Approved (gold)"));

        let mut request = ExportRequest::new(Format::Trl);
        request.status = Some("approved".into());
        request.expert = Some(ana.clone());
        assert_eq!(count(&s, &request).unwrap(), 1);
        let out = dir.path().join("gold.jsonl");
        let seen = RefCell::new(Vec::new());
        let done = run(&s, &request, &out.display().to_string(), &|p| {
            seen.borrow_mut().push((p.done, p.total))
        })
        .unwrap();
        assert_eq!((done.episodes, done.left_out), (1, 0));
        assert!(done.steps > 0);
        assert_eq!(done.path, out.display().to_string());
        assert_eq!(seen.into_inner(), [(0, 1), (1, 1)]);

        // The same filters through the engine directly, as `understudy
        // export --format trl --status approved --expert <ana>` builds them.
        let worlds = WorldSet::load(
            s.worlds_dir().unwrap(),
            &["support-desk".to_string()].into_iter().collect(),
        )
        .unwrap();
        let expected = dir.path().join("engine.jsonl");
        export::export_to_path(
            &Source::Store(s.store()),
            Some(&worlds),
            &ExportOptions {
                format: Format::Trl,
                filter: Filter {
                    status: Some(EpisodeStatus::Approved),
                    expert: Some(ana),
                    ..Filter::default()
                },
                ..ExportOptions::default()
            },
            &expected,
            &|| {},
        )
        .unwrap();
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&expected).unwrap()
        );

        // A dataset folder lists its files.
        let mut folder = ExportRequest::new(Format::Folder);
        folder.since = Some("2000-01-01".into());
        let to = dir.path().join("dataset");
        let done = run(&s, &folder, &to.display().to_string(), &|_| {}).unwrap();
        assert_eq!(done.episodes, 2);
        assert!(
            done.files.iter().any(|f| f.ends_with("README.md")),
            "{:?}",
            done.files
        );
        assert!(to.join("meta/info.json").is_file());
    }

    #[test]
    fn a_bad_destination_or_filter_is_refused_in_plain_words_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (s, _) = recorded(dir.path());
        let native = ExportRequest::new(Format::Native);
        let refuse =
            |request: &ExportRequest, output: &str| run(&s, request, output, &|_| {}).unwrap_err();
        let e = refuse(&native, "  ");
        assert_eq!(e.code, "invalid_input");
        assert!(e.message.contains("Choose where to save"), "{}", e.message);
        assert!(refuse(&native, "out.jsonl")
            .message
            .contains("not a full location"));
        assert!(refuse(&native, "/no/such/folder/out.jsonl")
            .message
            .contains("does not exist"));
        let folder_path = dir.path().display().to_string();
        assert!(refuse(&native, &folder_path)
            .message
            .contains("is a folder"));
        let file = dir.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        assert!(refuse(
            &ExportRequest::new(Format::Folder),
            &file.display().to_string()
        )
        .message
        .contains("needs a folder name"));
        let mut bad = native.clone();
        bad.status = Some("finished".into());
        let e = refuse(&bad, &dir.path().join("x.jsonl").display().to_string());
        assert!(e.message.contains("not an episode status"), "{}", e.message);
        assert!(!dir.path().join("x.jsonl").exists());
        assert_eq!(count(&s, &bad).unwrap_err().code, "invalid_input");
    }
}
