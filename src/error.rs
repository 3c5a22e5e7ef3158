//! The engine's error type. Errors that describe a problem in the *world
//! being run* (a failed guard, bad arguments) are not errors here: they are
//! observations, recorded like any other step. These are failures of the
//! caller or the environment.

use crate::world::Diagnostic;

/// Every fallible engine operation returns this.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The world folder did not load; every problem found is listed.
    #[error("{} has {} problem(s):\n{}", .path, .problems.len(), render_list(.problems))]
    WorldInvalid {
        path: String,
        problems: Vec<Diagnostic>,
    },
    #[error("unknown task `{task}` in world `{world}`")]
    UnknownTask { world: String, task: String },
    #[error("the episode has ended ({reason}); reset it to start again")]
    EpisodeOver { reason: String },
    #[error("invalid action: {0}")]
    InvalidAction(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The store file cannot be used (corrupt, foreign, too new, unreadable).
    #[error("{path}: {message}")]
    Store { path: String, message: String },
    #[error("{0} not found")]
    NotFound(String),
    /// The world changed since the episode was recorded.
    #[error("{0}")]
    WorldChanged(String),
    /// The request does not fit the current state (e.g. stepping a paused
    /// or submitted episode).
    #[error("{0}")]
    Conflict(String),
    /// An input file (e.g. episodes to import) was rejected whole; every
    /// problem found is listed with its line.
    #[error("{} has {} problem(s):\n{}", .path, .problems.len(), render_list(.problems))]
    InvalidInput { path: String, problems: Vec<String> },
    /// A rubric file did not load; every problem found is listed with its
    /// file, line and criterion.
    #[error("{} has {} problem(s):\n{}", .path, .problems.len(), render_list(.problems))]
    RubricInvalid {
        path: String,
        problems: Vec<Diagnostic>,
    },
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// A stable machine-readable code, used when errors cross IPC or HTTP as
    /// `{code, message}`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::WorldInvalid { .. } => "world_invalid",
            Error::UnknownTask { .. } => "unknown_task",
            Error::EpisodeOver { .. } => "episode_over",
            Error::InvalidAction(_) => "invalid_action",
            Error::Io { .. } => "io",
            Error::Sqlite(_) => "database",
            Error::Store { .. } => "store",
            Error::NotFound(_) => "not_found",
            Error::WorldChanged(_) => "world_changed",
            Error::Conflict(_) => "conflict",
            Error::InvalidInput { .. } => "invalid_input",
            Error::RubricInvalid { .. } => "rubric_invalid",
            Error::Other(_) => "error",
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

fn render_list(problems: &[impl std::fmt::Display]) -> String {
    problems
        .iter()
        .map(|p| format!("  - {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An I/O failure as one message. (`Error::Io` keeps the cause as a
/// source, which the CLI would print twice.)
pub(crate) fn io_error(context: impl std::fmt::Display, e: std::io::Error) -> Error {
    Error::Other(format!("{context}: {e}"))
}
