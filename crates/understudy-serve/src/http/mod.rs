//! HTTP in OpenEnv's shape (axum on tokio): the routes of [`ROUTES`]
//! (`POST /reset`, `POST /step`, `POST /close`, `GET /state?episode_id=`,
//! `GET /schema`, `GET /tasks`, `GET /health`, `GET /metadata`), OpenEnv's
//! WebSocket sessions on `GET /ws` ([`ws`]), MCP's streamable HTTP on
//! `/mcp` ([`mcp`]) and `GET /openapi.json` ([`openapi`], generated from
//! the same tables). Errors are
//! `{"error": {"code", "message", "status"}}` with the matching HTTP
//! status, for every route, including unknown ones.
//!
//! Engine work runs on tokio's blocking pool: a step waits on an fsync, and
//! the async workers must keep accepting and answering meanwhile.
//!
//! **Hostile clients.** Every request first passes [`Guard`] (Host,
//! Origin, Content-Type, optional bearer token: what stops web pages and
//! DNS rebinding); headers must arrive within
//! [`HttpOptions::header_timeout`] and a body within
//! [`HttpOptions::body_timeout`], whole, and at most [`MAX_BODY`] bytes;
//! open connections are capped; and shutdown waits for requests in flight
//! only [`HttpOptions::shutdown_grace`]. `/ws` upgrades pass the same
//! guard; a WebSocket session is bounded by message size, the idle timeout
//! and shutdown ([`ws`]). `/mcp` passes it too, and reads bodies within
//! the same limits ([`mcp`]). The threat model is in `docs/agent-api.md`.

mod guard;
mod listen;
pub mod mcp;
pub mod openapi;
pub mod ws;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

pub use guard::Guard;
pub use listen::Stopping;

use super::protocol::{codes, ApiError, Fields, Op};
use super::service::{Reply, Server};

/// Request bodies larger than this are refused with 413.
pub const MAX_BODY: usize = 4 << 20;

/// How the HTTP transport is bounded and who may use it.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Every request must carry `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Host names accepted in `Host` besides the bound address.
    pub allowed_hosts: Vec<String>,
    /// A request's whole header must arrive within this (default 10 s).
    pub header_timeout: Duration,
    /// A request's whole body must arrive within this (default 30 s).
    pub body_timeout: Duration,
    /// Open connections at most (default 1024); more wait to be accepted.
    pub max_connections: usize,
    /// Shutdown takes about this long at most (default 10 s): requests in
    /// flight get until then to finish, then open episodes are closed.
    pub shutdown_grace: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            token: None,
            allowed_hosts: Vec::new(),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 1024,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// An HTTP method a route answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
}

impl Verb {
    fn name(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
        }
    }

    /// The key of an operation in an OpenAPI path item.
    fn openapi(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::Post => "post",
        }
    }
}

/// One route running an [`Op`]: a POST reads its fields from the JSON
/// body, a GET from the query string.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub verb: Verb,
    pub path: &'static str,
    pub op: Op,
    pub summary: &'static str,
}

/// Every route that runs an op: the router, `/openapi.json` and the
/// not-found message are all built from this table.
pub const ROUTES: &[Route] = &[
    Route {
        verb: Verb::Post,
        path: "/reset",
        op: Op::Reset,
        summary: "Start an episode of a task (recorded as a trajectory).",
    },
    Route {
        verb: Verb::Post,
        path: "/step",
        op: Op::Step,
        summary: "Apply one action to an open episode.",
    },
    Route {
        verb: Verb::Post,
        path: "/close",
        op: Op::Close,
        summary: "Close an episode; a running one is recorded as abandoned.",
    },
    Route {
        verb: Verb::Get,
        path: "/state",
        op: Op::State,
        summary: "An open episode's state.",
    },
    Route {
        verb: Verb::Get,
        path: "/schema",
        op: Op::Schema,
        summary: "JSON Schemas of actions, observations and state, and the tools.",
    },
    Route {
        verb: Verb::Get,
        path: "/tasks",
        op: Op::Tasks,
        summary: "The served worlds and their tasks (no answer keys).",
    },
    Route {
        verb: Verb::Get,
        path: "/health",
        op: Op::Health,
        summary: "Whether the server runs, and its limits.",
    },
    Route {
        verb: Verb::Get,
        path: "/metadata",
        op: Op::Metadata,
        summary: "OpenEnv's environment metadata: name, description, version.",
    },
];

/// Paths answered besides [`ROUTES`].
const OTHER_ROUTES: &[(Verb, &str)] = &[
    (Verb::Get, "/ws"),
    (Verb::Post, "/mcp"),
    (Verb::Get, "/openapi.json"),
];

/// What the handlers share.
#[derive(Clone)]
struct App {
    server: Arc<Server>,
    body_timeout: Duration,
    /// Open WebSocket sessions at most (one permit each).
    ws_slots: Arc<Semaphore>,
    /// MCP's streamable HTTP on `/mcp`.
    mcp: mcp::McpService,
    stopping: Stopping,
}

/// The routes behind `guard`, for tests and embedding. WebSocket sessions
/// are capped at [`HttpOptions::default`]'s `max_connections` and never
/// told to stop.
pub fn router(server: Arc<Server>, guard: Guard, body_timeout: Duration) -> Router {
    let slots = HttpOptions::default().max_connections;
    let mcp = mcp::service(Arc::clone(&server), slots);
    build_router(server, guard, body_timeout, slots, mcp, Stopping::never())
}

fn build_router(
    server: Arc<Server>,
    guard: Guard,
    body_timeout: Duration,
    slots: usize,
    mcp: mcp::McpService,
    stopping: Stopping,
) -> Router {
    let guard = Arc::new(guard);
    let mut routes = Router::new();
    for route in ROUTES {
        let op = route.op;
        routes = match route.verb {
            Verb::Post => routes.route(route.path, post(move |s, b| post_op(op, s, b))),
            Verb::Get => routes.route(route.path, get(move |s, q| get_op(op, s, q))),
        };
    }
    routes
        .route("/ws", get(ws_upgrade))
        .route("/mcp", any(mcp::route))
        .route("/openapi.json", get(|| async { Json(openapi::document()) }))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(App {
            server,
            body_timeout,
            ws_slots: Arc::new(Semaphore::new(slots.max(1))),
            mcp,
            stopping,
        })
        .layer(axum::middleware::from_fn(
            move |req: Request, next: Next| {
                let guard = Arc::clone(&guard);
                async move {
                    let (parts, body) = req.into_parts();
                    match guard.check(&parts) {
                        Ok(()) => next.run(Request::from_parts(parts, body)).await,
                        Err(e) => error_response(&e),
                    }
                }
            },
        ))
}

/// [`serve_with`] with the default options.
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: Arc<Server>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, server, HttpOptions::default(), shutdown).await
}

/// Serves until `shutdown` completes; then requests in flight get until
/// `shutdown_grace` has passed to finish, and every open session is closed (running
/// episodes recorded as abandoned, every committed step kept). An episode
/// whose step is still running after that is left as a crash would leave
/// it: its committed steps kept, its status `in_progress`.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    server: Arc<Server>,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let bound: SocketAddr = listener.local_addr()?;
    let guard = Guard::new(bound, options.token.clone(), &options.allowed_hosts);
    let (stop, stopping) = listen::stop_signal();
    let mcp = mcp::service(Arc::clone(&server), options.max_connections);
    mcp::cancel_on_stop(stopping.clone(), mcp.clone());
    let app = build_router(
        Arc::clone(&server),
        guard,
        options.body_timeout,
        options.max_connections,
        mcp,
        stopping,
    );
    let limits = listen::Limits {
        header_timeout: options.header_timeout,
        max_connections: options.max_connections,
        shutdown_grace: options.shutdown_grace,
    };
    let deadline = listen::serve(listener, app, limits, stop, shutdown).await;
    // What is left of the grace; sessions nobody holds close at once even
    // when nothing is left.
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    // Logs what it closed and what it had to leave.
    let _ = tokio::task::spawn_blocking(move || server.close_all_within(left)).await;
    Ok(())
}

/// The whole body, within the time limit and the size limit.
async fn read_body(body: Body, limit: Duration) -> Result<Bytes, ApiError> {
    match tokio::time::timeout(limit, Limited::new(body, MAX_BODY).collect()).await {
        Err(_) => Err(ApiError::new(
            408,
            codes::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {:.1}s",
                limit.as_secs_f64()
            ),
        )),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(ApiError::new(
            413,
            codes::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {MAX_BODY} bytes"),
        )),
        Ok(Err(e)) => Err(ApiError::invalid_request(format!(
            "cannot read the request body: {e}"
        ))),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

async fn post_op(op: Op, State(app): State<App>, request: Request) -> Response {
    let body = match read_body(request.into_body(), app.body_timeout).await {
        Ok(b) => b,
        Err(e) => return error_response(&e),
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
    run_blocking(app.server, op, fields).await
}

async fn get_op(
    op: Op,
    State(app): State<App>,
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
    let server = app.server;
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

/// `GET /ws`: upgrades to an OpenEnv session ([`ws::run`]). The guard
/// has passed already; a request that is not a WebSocket handshake gets
/// 426, and one over the session cap 429.
async fn ws_upgrade(
    State(app): State<App>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(e) => {
            return error_response(&ApiError::new(
                426,
                codes::UPGRADE_REQUIRED,
                format!("/ws takes a WebSocket handshake (OpenEnv's EnvClient): {e}"),
            ))
        }
    };
    let Ok(permit) = Arc::clone(&app.ws_slots).try_acquire_owned() else {
        return error_response(&ApiError::new(
            429,
            codes::TOO_MANY_EPISODES,
            "too many WebSocket sessions are open; close one first",
        ));
    };
    let session = ws::Session {
        idle_timeout: app.server.config().idle_timeout,
        server: app.server,
        stopping: app.stopping,
        permit,
    };
    upgrade
        .max_message_size(MAX_BODY)
        .max_frame_size(MAX_BODY)
        .on_upgrade(move |socket| ws::run(socket, session))
}

/// Every path the server answers, with its method, for messages.
fn route_list() -> String {
    ROUTES
        .iter()
        .map(|r| (r.verb, r.path))
        .chain(OTHER_ROUTES.iter().copied())
        .map(|(verb, path)| format!("{} {path}", verb.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn not_found(uri: axum::http::Uri) -> Response {
    error_response(&ApiError::new(
        404,
        codes::NOT_FOUND,
        format!("no route {}; the routes are {}", uri.path(), route_list()),
    ))
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    let expected = ROUTES
        .iter()
        .find(|r| r.path == uri.path())
        .map_or("GET", |r| r.verb.name());
    error_response(&ApiError::new(
        405,
        codes::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}; use {expected}", uri.path()),
    ))
}
