//! The engine's error type. Errors that describe a problem in the *world
//! being run* (a failed guard, bad arguments) are not errors here: they are
//! observations, recorded like any other step. These are failures of the
//! caller or the environment.

use crate::diagnostics::Diagnostic;

/// Every fallible engine operation returns this.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The world folder did not load; every problem found is listed.
    #[error("{} has {} problem(s):\n{}", .path, .problems.len(), render_list(.problems))]
    WorldInvalid {
        /// The world folder, as given to [`World::load`](crate::World::load).
        path: String,
        /// Each problem with its file and, where there is one, its line.
        problems: Vec<Diagnostic>,
    },
    /// A task id that the world does not declare.
    #[error("unknown task `{task}` in world `{world}`")]
    UnknownTask {
        /// The world's id.
        world: String,
        /// The id asked for.
        task: String,
    },
    /// A step after the task ended or the step limit was hit.
    #[error("the episode has ended ({reason}); reset it to start again")]
    EpisodeOver {
        /// Which end: `the task ended` or `the step limit was reached`.
        reason: String,
    },
    /// Input that is not an action at all (as opposed to a valid action the
    /// world refuses, which is an observation); the text says where and why.
    #[error("invalid action: {0}")]
    InvalidAction(String),
    /// A file could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. `reading tools/refund.toml`.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite failed outside a tool's own SQL (whose failures are
    /// observations).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The store file cannot be used (corrupt, foreign, too new, unreadable).
    #[error("{path}: {message}")]
    Store {
        /// The store file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// Something asked for by id is not there; the text names it
    /// (`episode 0190…`, `step 3`).
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
    InvalidInput {
        /// The input's name in messages, e.g. its file path.
        path: String,
        /// Each problem, starting with its line (`line 3: ...`).
        problems: Vec<String>,
    },
    /// A rubric file did not load; every problem found is listed with its
    /// file, line and criterion.
    #[error("{} has {} problem(s):\n{}", .path, .problems.len(), render_list(.problems))]
    RubricInvalid {
        /// The rubric file.
        path: String,
        /// Each problem with its file, line and criterion.
        problems: Vec<Diagnostic>,
    },
    /// Anything else, worded for the user.
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

/// The engine's `Result`, with [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An I/O failure as one message. (`Error::Io` keeps the cause as a
/// source, which the CLI would print twice.)
pub(crate) fn io_error(context: impl std::fmt::Display, e: std::io::Error) -> Error {
    Error::Other(format!("{context}: {e}"))
}
