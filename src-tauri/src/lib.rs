//! # Understudy desktop capture app
//!
//! Domain experts perform a world's tasks in a real window; every action is
//! recorded as a gold trajectory. **This crate is the only one that knows
//! Tauri, and it holds no domain logic**: worlds, episodes, undo, pause and
//! durable recording all live in the engine (`understudy`). The window is
//! React + TypeScript in `ui/`; the types it receives are generated from the
//! Rust ones here (`ui/src/bindings`, see `export_bindings` below).
//!
//! Layout, one file per area of commands:
//! - [`home`]: everything the start screen shows, in one call;
//! - [`worlds`]: the world and task catalogue, a world's policy and views;
//! - [`experts`]: expert profiles and who is using the app;
//! - [`episodes`]: start, act, annotate, undo, pause, review, submit, discard;
//! - [`review`]: the readable state diff shown before submitting;
//! - [`hub`]: the team hub: sign-in, the assignment queue, offline-first
//!   sync (the logic is `understudy_hub::outbox`);
//! - [`hub_work`]: the review queue's decisions, the grading sheet's
//!   grades and the rubric workspace's versions, queued for the hub;
//! - [`queue`]: the review queue, and a reviewer's approve or reject;
//! - [`replay_view`]: a finished episode step by step, for reviewers;
//! - [`consensus`]: where experts' runs of one task diverge, for reviewers;
//! - [`dashboard`]: a task's scores, criteria and pass^k at a glance;
//! - [`export`]: the export dialog: formats, filters, progress, the result;
//! - [`progress`]: experts', reviewers' and graders' progress;
//! - [`grading`]: agent runs imported, graded and overridden by experts,
//!   and the graders' agreement;
//! - [`service`]: the thin layer all commands call (store, worlds, open
//!   recorders);
//! - [`error`]: every error as `{code, message}` in plain language;
//! - [`ipc`]: how each command is declared, and the window's typed calls
//!   generated from those declarations;
//! - [`paths`]: `--data-dir` / `UNDERSTUDY_DATA_DIR`, and where worlds are.
//!
//! **Durability invariant:** a command that performs an action returns only
//! after the engine's recorder committed it to the SQLite store, so the
//! window never shows a result that a crash could lose.

pub mod consensus;
pub mod dashboard;
pub mod episodes;
pub mod error;
pub mod experts;
pub mod export;
pub mod grading;
pub mod home;
pub mod hub;
pub mod hub_work;
pub mod ipc;
pub mod paths;
pub mod progress;
pub mod queue;
pub mod replay_view;
pub mod review;
pub mod rubrics;
pub mod service;
#[cfg(test)]
mod testing;
pub mod transcript;
pub mod webview;
pub mod world_labels;
mod world_shelf;
pub mod worlds;

use std::path::PathBuf;
use std::time::Instant;

use tauri::{Manager, State, WebviewUrl, WebviewWindowBuilder};

use crate::error::{AppError, AppResult};
use crate::ipc::command;
use crate::paths::Options;
use crate::service::Service;

/// What every command reaches through `State`.
pub struct AppState {
    service: Result<Service, AppError>,
    hub: hub::HubState,
    started: Instant,
}

impl AppState {
    /// The service, or the reason it could not start (shown as a plain
    /// error in the window instead of a crash).
    pub fn service(&self) -> AppResult<&Service> {
        self.service.as_ref().map_err(Clone::clone)
    }

    /// The team hub: sign-in and sync (not connected unless signed in).
    pub fn hub(&self) -> &hub::HubState {
        &self.hub
    }

    /// Why the app could not start, if it could not.
    pub fn startup_error(&self) -> Option<&AppError> {
        self.service.as_ref().err()
    }
}

command! {
    /// Called by the page once it is interactive. Returns the milliseconds
    /// since the process started (and logs them, see `perf_mark`).
    #[tauri::command]
    fn mark_interactive(state: State<'_, AppState>, label: String) -> f64 {
        perf_mark(&label);
        process_age_ms().unwrap_or_else(|| state.started.elapsed().as_secs_f64() * 1000.0)
    }
}

/// Every command the window may call, listed once: `with_commands!(m)`
/// hands the list to the macro `m`, which registers them with Tauri (in
/// [`run`]) or collects their signatures (in [`signatures`]).
macro_rules! with_commands {
    ($then:ident) => {
        $then!(
            mark_interactive,
            home::home,
            worlds::get_world,
            experts::save_expert,
            experts::select_expert,
            episodes::start_episode,
            episodes::open_episode,
            episodes::run_action,
            episodes::annotate_step,
            episodes::undo_action,
            episodes::redo_action,
            episodes::pause_episode,
            episodes::resume_episode,
            episodes::review_episode,
            episodes::submit_episode,
            episodes::discard_episode,
            episodes::restart_episode,
            episodes::save_draft,
            episodes::checkpoint_episode,
            transcript::episode_transcript,
            queue::review_queue,
            queue::decide_episode,
            replay_view::open_replay,
            replay_view::replay_state,
            rubrics::open_rubric,
            rubrics::draft_rubric,
            rubrics::check_rubric,
            rubrics::lint_rubric,
            rubrics::try_rubric,
            rubrics::save_rubric,
            rubrics::preview_query,
            rubrics::compare_rubric_versions,
            grading::grading_runs,
            grading::import_agent_runs,
            grading::assign_grader,
            grading::open_grading,
            grading::grade_criterion,
            grading::finish_grading,
            grading::grading_agreement,
            consensus::task_consensus,
            dashboard::task_dashboard,
            export::export_choices,
            export::export_count,
            export::export_dataset,
            progress::people_progress,
            hub::hub_status,
            hub::hub_sign_in,
            hub::hub_sign_out,
            hub::hub_sync,
        )
    };
}

macro_rules! register {
    ($($($path:ident)::+),* $(,)?) => {
        tauri::generate_handler![$($($path)::+),*]
    };
}

macro_rules! signatures_of {
    ($($($path:ident)::+),* $(,)?) => {
        vec![$($($path)::+::signature()),*]
    };
}

/// The signature of every command, in the order they are registered.
pub fn signatures() -> Vec<ipc::Signature> {
    with_commands!(signatures_of)
}

/// Appends `label ms` (milliseconds since the process started) to the file
/// named by `UNDERSTUDY_PERF_LOG`, if set: for start-up measurements.
fn perf_mark(label: &str) {
    if let (Some(path), Some(ms)) = (std::env::var_os("UNDERSTUDY_PERF_LOG"), process_age_ms()) {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{label} {ms:.0}");
        }
    }
}

/// Milliseconds since this process started, from `/proc` (Linux), so the
/// time to load the program and its libraries counts too.
fn process_age_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces; fields resume after its ')'.
    let after = stat.rsplit_once(')')?.1;
    let start_ticks: f64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // USER_HZ is 100 on every Linux platform Tauri supports.
    Some((uptime - start_ticks / 100.0) * 1000.0)
}

/// Starts the app. Reads `--data-dir`, `--worlds-dir` and `--blank` (an
/// empty page, the baseline for start-up and memory measurements).
pub fn run() {
    let started = Instant::now();
    webview::prepare_environment(webview::Engines::from_env(|k| std::env::var_os(k)));
    let options = Options::from_args_and_env(std::env::args_os(), |k| std::env::var_os(k));
    let mut window_state = tauri_plugin_window_state::Builder::default();
    if let Some(dir) = &options.data_dir {
        window_state = window_state.with_filename(dir.join("window-state.json").to_string_lossy());
    }
    let result = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(window_state.build())
        .setup(move |app| {
            let data_dir = match &options.data_dir {
                Some(d) => Ok(d.clone()),
                None => app.path().app_data_dir().map_err(|e| {
                    AppError::new(
                        "io",
                        "The app could not find your user data folder. Start it with --data-dir.",
                    )
                    .with_detail(e.to_string())
                }),
            };
            let worlds_dir = options.worlds_dir.clone().or_else(|| {
                let exe = std::env::current_exe().ok();
                let resources = app.path().resource_dir().ok();
                let cwd = std::env::current_dir().ok();
                paths::find_worlds_dir(exe.as_deref(), resources.as_deref(), cwd.as_deref())
            });
            let hub = hub::HubState::open(data_dir.as_deref().ok());
            let service = data_dir.and_then(|d| Service::open(&d, worlds_dir));
            app.manage(AppState {
                service,
                hub,
                started,
            });
            if !options.blank {
                hub::start_background_sync(app.handle().clone());
            }
            let page = if options.blank {
                "blank.html"
            } else {
                "index.html"
            };
            let window =
                WebviewWindowBuilder::new(app, "main", WebviewUrl::App(PathBuf::from(page)))
                    .title("Understudy")
                    .inner_size(1440.0, 900.0)
                    .min_inner_size(1024.0, 640.0)
                    .center()
                    .build()?;
            webview::trim(&window)?;
            perf_mark("window");
            if !options.blank {
                // Read the worlds while the page loads: after the window is
                // made, since on two cores doing it sooner slows the window.
                let handle = app.handle().clone();
                std::thread::spawn(move || {
                    if let Ok(s) = handle.state::<AppState>().service() {
                        s.warm_up();
                        perf_mark("worlds");
                    }
                });
            }
            Ok(())
        })
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::CloseRequested { .. } = event {
                if let Ok(service) = window.state::<AppState>().service() {
                    service.pause_all();
                }
            }
        })
        .invoke_handler(with_commands!(register))
        .run(tauri::generate_context!());
    if let Err(e) = result {
        eprintln!("Understudy could not start: {e}");
        std::process::exit(1);
    }
}

/// Writes the TypeScript bindings the window imports: the types (ts-rs,
/// the engine's included) and `commands.ts` (see [`ipc`]). CI regenerates
/// them and fails if the committed ones differ:
/// `cargo test -p understudy-app export_bindings`.
#[cfg(test)]
mod bindings {
    use ts_rs::TS;

    #[test]
    fn export_bindings() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings");
        // Start clean, so a type that is gone leaves no stale file behind.
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|e| e == "ts") {
                std::fs::remove_file(entry.path()).expect("removing an old binding");
            }
        }
        let all = [
            crate::home::HomeView::export_all_to(&dir),
            crate::worlds::WorldDetail::export_all_to(&dir),
            crate::experts::ExpertView::export_all_to(&dir),
            understudy::store::ExpertInput::export_all_to(&dir),
            crate::episodes::EpisodeView::export_all_to(&dir),
            crate::episodes::EpisodeSummary::export_all_to(&dir),
            crate::episodes::StepTaken::export_all_to(&dir),
            crate::transcript::TurnView::export_all_to(&dir),
            crate::review::ReviewView::export_all_to(&dir),
            crate::queue::QueueView::export_all_to(&dir),
            crate::replay_view::ReplayView::export_all_to(&dir),
            crate::replay_view::ReplayState::export_all_to(&dir),
            crate::rubrics::LintProgressEvent::export_all_to(&dir),
            crate::rubrics::RubricWorkspaceView::export_all_to(&dir),
            crate::rubrics::DraftView::export_all_to(&dir),
            crate::rubrics::LintView::export_all_to(&dir),
            crate::rubrics::TryView::export_all_to(&dir),
            crate::rubrics::SavedView::export_all_to(&dir),
            understudy::rubric::preview::QueryPreview::export_all_to(&dir),
            understudy::rubric::compare::RubricComparison::export_all_to(&dir),
            crate::grading::GradingView::export_all_to(&dir),
            crate::grading::ImportView::export_all_to(&dir),
            crate::grading::SheetView::export_all_to(&dir),
            crate::world_labels::WorldLabels::export_all_to(&dir),
            crate::grading::AgreementView::export_all_to(&dir),
            crate::consensus::ConsensusView::export_all_to(&dir),
            crate::dashboard::DashboardView::export_all_to(&dir),
            crate::export::ExportChoices::export_all_to(&dir),
            crate::export::ExportDone::export_all_to(&dir),
            crate::export::ExportProgressEvent::export_all_to(&dir),
            understudy::export::ExportRequest::export_all_to(&dir),
            crate::progress::ProgressView::export_all_to(&dir),
            understudy::grading::GradeInput::export_all_to(&dir),
            crate::hub::HubView::export_all_to(&dir),
            // Not inside any command's type: the content of a view listing
            // step (`StepView.content`), which the records table reads.
            understudy::observation::ViewListing::export_all_to(&dir),
        ];
        for result in all {
            result.expect("writing the TypeScript bindings");
        }
        let commands = crate::ipc::typescript(&crate::signatures());
        std::fs::write(dir.join("commands.ts"), commands).expect("writing commands.ts");
        // Every type a command names has its own file.
        for sig in crate::signatures() {
            for (_, path) in sig
                .args
                .iter()
                .map(|a| &a.ty)
                .chain([&sig.returns])
                .flat_map(|t| &t.imports)
            {
                assert!(
                    dir.join(path).exists(),
                    "{} is not exported",
                    path.display()
                );
            }
        }
    }
}
