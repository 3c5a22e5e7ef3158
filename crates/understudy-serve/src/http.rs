//! HTTP in OpenEnv's shape (axum on tokio): `POST /reset`, `POST /step`,
//! `POST /close`, `GET /state?episode_id=`, `GET /schema`, `GET /tasks`,
//! `GET /health`. Errors are `{"error": {"code", "message", "status"}}` with
//! the matching HTTP status, for every route, including unknown ones.
//!
//! Engine work runs on tokio's blocking pool: a step waits on an fsync, and
//! the async workers must keep accepting and answering meanwhile.

use std::future::Future;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use super::protocol::{codes, ApiError, Fields, Op};
use super::service::{Reply, Server};

/// Request bodies larger than this are refused with 413.
pub const MAX_BODY: usize = 4 << 20;

/// The routes, for tests and embedding.
pub fn router(server: Arc<Server>) -> Router {
    Router::new()
        .route("/reset", post(|s, b| post_op(Op::Reset, s, b)))
        .route("/step", post(|s, b| post_op(Op::Step, s, b)))
        .route("/close", post(|s, b| post_op(Op::Close, s, b)))
        .route("/state", get(|s, q| get_op(Op::State, s, q)))
        .route("/schema", get(|s, q| get_op(Op::Schema, s, q)))
        .route("/tasks", get(|s, q| get_op(Op::Tasks, s, q)))
        .route("/health", get(|s, q| get_op(Op::Health, s, q)))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(server)
}

/// Serves until `shutdown` completes, then closes every open session
/// (running episodes are recorded as abandoned).
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: Arc<Server>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(Arc::clone(&server));
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await?;
    let closed = tokio::task::spawn_blocking(move || server.close_all())
        .await
        .unwrap_or(0);
    if closed > 0 {
        tracing::info!(closed, "closed open episodes at shutdown");
    }
    Ok(())
}

async fn post_op(
    op: Op,
    State(server): State<Arc<Server>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return error_response(&ApiError::new(
                413,
                codes::PAYLOAD_TOO_LARGE,
                format!("the request body is larger than {MAX_BODY} bytes"),
            ))
        }
        Err(e) => {
            return error_response(&ApiError::invalid_request(format!(
                "cannot read the request body: {e}"
            )))
        }
    };
    let value: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return error_response(&ApiError::invalid_json(format!(
                    "the request body is not valid JSON: {e}"
                )))
            }
        }
    };
    let fields = match Fields::from_value(op, value) {
        Ok(f) => f,
        Err(e) => return error_response(&e),
    };
    run_blocking(server, op, fields).await
}

async fn get_op(
    op: Op,
    State(server): State<Arc<Server>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let pairs = match query {
        Ok(Query(p)) => p,
        Err(e) => {
            return error_response(&ApiError::invalid_request(format!(
                "cannot read the query string: {e}"
            )))
        }
    };
    let fields = Fields::from_query(op, pairs);
    match op {
        // Touches a session's lock, which a step may hold through an fsync.
        Op::State => run_blocking(server, op, fields).await,
        _ => reply_response(server.handle(op, fields)),
    }
}

async fn run_blocking(server: Arc<Server>, op: Op, fields: Fields) -> Response {
    let joined = tokio::task::spawn_blocking(move || server.handle(op, fields)).await;
    match joined {
        Ok(result) => reply_response(result),
        Err(e) => error_response(&ApiError::new(
            500,
            codes::INTERNAL,
            format!("the request failed inside the server: {e}"),
        )),
    }
}

fn reply_response(result: Result<Reply, ApiError>) -> Response {
    match result {
        Ok(reply) => (StatusCode::OK, Json(reply)).into_response(),
        Err(e) => error_response(&e),
    }
}

fn error_response(e: &ApiError) -> Response {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(json!({ "error": e.to_json() }))).into_response()
}

async fn not_found(uri: axum::http::Uri) -> Response {
    error_response(&ApiError::new(
        404,
        codes::NOT_FOUND,
        format!(
            "no route {}; the routes are POST /reset, POST /step, POST /close, GET /state, GET /schema, GET /tasks, GET /health",
            uri.path()
        ),
    ))
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    let expected = match uri.path() {
        "/reset" | "/step" | "/close" => "POST",
        _ => "GET",
    };
    error_response(&ApiError::new(
        405,
        codes::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}; use {expected}", uri.path()),
    ))
}
