//! Expert profiles: who is recording. The profile is stored in the store's
//! `experts` table; which expert is using this machine is remembered in
//! `settings.json` in the data folder.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tauri::State;
use ts_rs::TS;
use understudy::store::ExpertInput;

use crate::error::{AppError, AppResult};
use crate::ipc::command;
use crate::AppState;

/// An expert as the window shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ExpertView {
    pub id: String,
    pub name: String,
    /// e.g. "Customer support", "Tax law".
    pub domain: String,
    pub credentials: String,
    /// The expert confirmed their credentials are true.
    pub credentials_attested: bool,
    /// An administrator checked the credentials.
    pub verified: bool,
    /// This is the expert using the app now.
    pub current: bool,
}

impl ExpertView {
    pub fn new(e: understudy::store::Expert, current: Option<&str>) -> ExpertView {
        ExpertView {
            current: current == Some(e.id.as_str()),
            id: e.id,
            name: e.name,
            domain: e.domain,
            credentials: e.credentials,
            credentials_attested: e.credentials_attested,
            verified: e.verified,
        }
    }

    pub fn current(mut self) -> ExpertView {
        self.current = true;
        self
    }
}

/// Per-machine settings kept beside the store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub current_expert: Option<String>,
}

const SETTINGS_FILE: &str = "settings.json";

impl Settings {
    /// Reads the settings; a missing or unreadable file means defaults.
    pub fn load(data_dir: &Path) -> Settings {
        std::fs::read(data_dir.join(SETTINGS_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Writes the settings atomically (a temporary file, then a rename).
    pub fn save(&self, data_dir: &Path) -> AppResult<()> {
        let fail = |e: std::io::Error| {
            AppError::new(
                "io",
                "Your settings could not be saved. Check that you may write to the data folder.",
            )
            .with_detail(e.to_string())
        };
        let text =
            serde_json::to_vec_pretty(self).map_err(|e| AppError::new("io", e.to_string()))?;
        let tmp = data_dir.join(format!("{SETTINGS_FILE}.tmp"));
        std::fs::write(&tmp, text).map_err(fail)?;
        std::fs::rename(&tmp, data_dir.join(SETTINGS_FILE)).map_err(fail)
    }
}

command! {
    /// Creates (no `id`) or updates an expert; they become the current expert.
    #[tauri::command(async)]
    pub fn save_expert(
        state: State<'_, AppState>,
        id: Option<String>,
        draft: ExpertInput,
    ) -> AppResult<ExpertView> {
        state.service()?.save_expert(id.as_deref(), draft)
    }
}

command! {
    /// Makes an existing expert the one using the app.
    #[tauri::command(async)]
    pub fn select_expert(state: State<'_, AppState>, id: String) -> AppResult<ExpertView> {
        state.service()?.select_expert(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_tolerate_garbage() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Settings::load(dir.path()), Settings::default());
        let s = Settings {
            current_expert: Some("e1".into()),
        };
        s.save(dir.path()).unwrap();
        assert_eq!(Settings::load(dir.path()), s);
        std::fs::write(dir.path().join(SETTINGS_FILE), b"{not json").unwrap();
        assert_eq!(Settings::load(dir.path()), Settings::default());
    }
}
