//! Errors: [`ApiError`] is what the HTTP API answers (`{code, message}` with
//! a status), [`HubError`] what the library's calls return.
//!
//! `understudy-serve` has an `ApiError` of the same shape (status, code,
//! message) on purpose not shared: the two servers' wire forms differ (the
//! hub answers a flat `{code, message}`, serve nests `{"error": {code,
//! message, status}}` and sends it over stdio too), their code tables do
//! not overlap, and the hub's converts database failures. What they would
//! share is a struct and a constructor; a crate for that would tie two
//! servers that otherwise know nothing of each other.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The stable `code` values of API errors (see `docs/hub.md`).
pub mod codes {
    /// No token, or a token the hub does not know.
    pub const UNAUTHORIZED: &str = "unauthorized";
    /// A token that was revoked (the message says when and by whom).
    pub const TOKEN_REVOKED: &str = "token_revoked";
    /// The hub is serving as many connections as it allows (retry).
    pub const BUSY: &str = "busy";
    /// The caller's role may not do this, or the thing is someone else's.
    pub const FORBIDDEN: &str = "forbidden";
    /// The body is not the JSON the route expects.
    pub const BAD_REQUEST: &str = "bad_request";
    /// A POST without `Content-Type: application/json`.
    pub const UNSUPPORTED_MEDIA_TYPE: &str = "unsupported_media_type";
    /// The body is larger than the hub accepts.
    pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
    /// No such episode, person, world or route.
    pub const NOT_FOUND: &str = "not_found";
    /// The change contradicts what the hub holds (a decided review, a
    /// login taken, ...).
    pub const CONFLICT: &str = "conflict";
    /// A pushed step has the id of a stored one but other content.
    pub const STEP_CONFLICT: &str = "step_conflict";
    /// An episode names a world hash the hub does not have.
    pub const UNKNOWN_WORLD: &str = "unknown_world";
    /// An uploaded world folder does not load.
    pub const WORLD_INVALID: &str = "world_invalid";
    /// The database is unreachable or failed.
    pub const DATABASE: &str = "database";
}

/// An API error: the HTTP status, a stable code and a message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{message} ({code})")]
pub struct ApiError {
    #[serde(skip)]
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, codes::BAD_REQUEST, message)
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(403, codes::FORBIDDEN, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(404, codes::NOT_FOUND, message)
    }

    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(409, codes::CONFLICT, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self)).into_response()
    }
}

impl From<tokio_postgres::Error> for ApiError {
    fn from(e: tokio_postgres::Error) -> ApiError {
        tracing::warn!("database: {e}");
        ApiError::new(
            503,
            codes::DATABASE,
            format!("the hub's database failed: {e}"),
        )
    }
}

impl From<deadpool_postgres::PoolError> for ApiError {
    fn from(e: deadpool_postgres::PoolError) -> ApiError {
        tracing::warn!("database pool: {e}");
        ApiError::new(
            503,
            codes::DATABASE,
            format!("the hub cannot reach its database: {e}"),
        )
    }
}

/// What the library's calls (database set-up, admin bootstrap, the client)
/// fail with.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// A database URL that does not parse, or one that cannot be reached.
    #[error("database {url}: {message}")]
    Database { url: String, message: String },
    /// Migrating the schema failed.
    #[error("migrating the hub's database: {0}")]
    Migration(String),
    /// Input the caller gave is wrong (names the parameter).
    #[error("{0}")]
    Invalid(String),
    /// The hub answered with an API error.
    #[error("the hub refused: {message} ({code}, HTTP {status})")]
    Api {
        status: u16,
        code: String,
        message: String,
    },
    /// The hub could not be reached, or the connection broke.
    #[error("cannot reach the hub at {url}: {message}")]
    Transport { url: String, message: String },
    /// The local store or a world failed.
    #[error(transparent)]
    Engine(#[from] understudy::Error),
    /// Reading or writing a local file.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl HubError {
    /// The API code when the hub refused, e.g. `unknown_world`.
    pub fn code(&self) -> Option<&str> {
        match self {
            HubError::Api { code, .. } => Some(code),
            _ => None,
        }
    }

    /// Worth retrying: the hub or the connection failed, not the request.
    pub fn is_transient(&self) -> bool {
        match self {
            HubError::Transport { .. } => true,
            HubError::Api { status, .. } => *status >= 500,
            _ => false,
        }
    }
}

impl From<ApiError> for HubError {
    fn from(e: ApiError) -> HubError {
        HubError::Api {
            status: e.status,
            code: e.code.to_string(),
            message: e.message,
        }
    }
}
