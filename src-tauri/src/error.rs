//! The one error type every command returns, serialized as `{code, message}`.
//!
//! `code` is stable and machine-readable (the engine's own codes, plus a few
//! of the app's); `message` is written for the expert using the app — a
//! lawyer, an accountant, a support lead — not for a programmer. The
//! engine's technical wording is kept in `detail` for bug reports.

use serde::Serialize;
use ts_rs::TS;

/// An error as the window receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct AppError {
    pub code: String,
    pub message: String,
    /// The technical cause, when there is one worth keeping.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    pub fn new(code: &str, message: impl Into<String>) -> AppError {
        AppError {
            code: code.to_string(),
            message: message.into(),
            detail: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> AppError {
        self.detail = Some(detail.into());
        self
    }

    pub fn not_found(what: impl std::fmt::Display) -> AppError {
        AppError::new(
            "not_found",
            format!("{what} could not be found. It may have been removed; go back to the start screen and pick it again."),
        )
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<understudy::Error> for AppError {
    fn from(e: understudy::Error) -> AppError {
        use understudy::Error as E;
        let detail = e.to_string();
        let code = e.code();
        let message = match &e {
            E::WorldInvalid { problems, .. } => format!(
                "This world could not be opened because {} of its files {} mistakes. Ask the world's author to run `understudy world check` on it.",
                problems.len(),
                if problems.len() == 1 { "has" } else { "have" }
            ),
            E::UnknownTask { task, .. } => {
                format!("The task \"{task}\" is no longer part of this world. Pick another task from the start screen.")
            }
            E::EpisodeOver { .. } => {
                "This task has already ended, so nothing more can be done in it. Review and submit it, or discard it and start again."
                    .to_string()
            }
            E::InvalidAction(_) => "That action could not be understood. Check what you entered and try again.".to_string(),
            E::Io { .. } => {
                "A file could not be read or written. Check that the disk is not full and that you may write to the data folder."
                    .to_string()
            }
            E::Sqlite(_) => {
                "Your work could not be saved to the recordings file, so the last action was not recorded. Try again; if it keeps failing, check the disk and restart the app."
                    .to_string()
            }
            E::Store { message, .. } => format!(
                "The recordings file could not be opened: {message}. Nothing in it was changed."
            ),
            E::NotFound(what) => return AppError::not_found(capitalize(what)).with_detail(detail),
            E::WorldChanged(_) => {
                "This world's files have changed since the work was recorded, so it cannot be resumed exactly as it was. Discard it and start the task again."
                    .to_string()
            }
            // Conflicts are already written as plain sentences by the recorder.
            E::Conflict(message) => capitalize(message) + ".",
            _ => "Something went wrong. Try again; if it keeps happening, restart the app.".to_string(),
        };
        AppError::new(code, message).with_detail(detail)
    }
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn engine_errors_become_plain_code_and_message() {
        let e = AppError::from(understudy::Error::Conflict(
            "the episode is paused; resume it first".into(),
        ));
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({
                "code": "conflict",
                "message": "The episode is paused; resume it first.",
                "detail": "the episode is paused; resume it first"
            })
        );
        let e = AppError::from(understudy::Error::NotFound("episode 42".into()));
        assert_eq!(e.code, "not_found");
        assert!(e.message.starts_with("Episode 42 could not be found."));
        let e = AppError::from(understudy::Error::EpisodeOver {
            reason: "the task ended".into(),
        });
        assert_eq!(e.code, "episode_over");
        assert!(
            !e.message.contains("reset"),
            "no engine jargon: {}",
            e.message
        );
    }

    #[test]
    fn app_errors_without_detail_serialize_two_fields() {
        let e = AppError::new("no_expert", "Tell us who you are first.");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"code": "no_expert", "message": "Tell us who you are first."})
        );
    }
}
