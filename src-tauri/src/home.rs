//! The start screen: the expert, the worlds and tasks with progress, the
//! episodes to resume, and where things are kept — in one call, so the
//! screen is ready after a single round trip.

use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::episodes::EpisodeSummary;
use crate::error::{AppError, AppResult};
use crate::experts::ExpertView;
use crate::ipc::command;
use crate::worlds::Catalog;
use crate::AppState;

#[derive(Debug, Clone, Serialize, TS)]
pub struct HomeView {
    pub version: String,
    /// Why the app could not open its store, if it could not; then the
    /// rest is empty.
    pub startup_error: Option<AppError>,
    pub store_path: Option<String>,
    /// The expert using the app, if they have a profile.
    pub expert: Option<ExpertView>,
    pub experts: Vec<ExpertView>,
    pub catalog: Option<Catalog>,
    /// The current expert's episodes in progress or paused, newest first.
    pub open_episodes: Vec<EpisodeSummary>,
}

command! {
    /// Everything the start screen shows, in one round trip.
    #[tauri::command(async)]
    pub fn home(state: State<'_, AppState>) -> AppResult<HomeView> {
        let mut view = HomeView {
            version: env!("CARGO_PKG_VERSION").to_string(),
            startup_error: state.startup_error().cloned(),
            store_path: None,
            expert: None,
            experts: Vec::new(),
            catalog: None,
            open_episodes: Vec::new(),
        };
        let Ok(service) = state.service() else {
            return Ok(view);
        };
        view.store_path = Some(service.store_path().display().to_string());
        view.expert = service.current_expert()?;
        view.experts = service.local_experts()?;
        view.catalog = Some(service.catalog()?);
        view.open_episodes = service.open_episodes()?;
        Ok(view)
    }
}
