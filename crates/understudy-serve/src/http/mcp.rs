//! `/mcp`: MCP's streamable HTTP transport (rmcp), behind the same
//! [`super::Guard`] as every route (Host, Origin, bearer token,
//! `Content-Type`).
//!
//! A POST body is read here first, within the body time limit and
//! [`super::MAX_BODY`], exactly as for the other routes. A body that is not
//! one JSON-RPC 2.0 message (not JSON, or no `"jsonrpc": "2.0"`) is
//! answered here with a JSON-RPC error and HTTP 200, as JSON-RPC prescribes
//! and OpenEnv's validator (`POST /mcp` with `{}`) expects; everything else
//! goes to rmcp, which keeps MCP's sessions (`Mcp-Session-Id`; one session
//! is one [`crate::mcp::McpSession`], so one episode). A session with no
//! request for the server's idle timeout is closed, as its episode is;
//! MCP sessions are capped like WebSocket sessions; shutdown ends their
//! event streams.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Map, Value};
use tokio::sync::Semaphore;

use super::{error_response, read_body, App, MAX_BODY};
use crate::mcp::McpSession;
use crate::service::Server;

/// The rmcp service behind `/mcp`.
pub type McpService = StreamableHttpService<McpSession, LocalSessionManager>;

/// The service for `server`: at most `slots` sessions at once, each closed
/// after the server's idle timeout.
pub fn service(server: Arc<Server>, slots: usize) -> McpService {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(server.config().idle_timeout);
    let config = StreamableHttpServerConfig::default()
        // The guard checks Host (with `--allow-host`) and Origin already.
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_BODY);
    let slots = Arc::new(Semaphore::new(slots.max(1)));
    let defaults = Arc::new(Map::new());
    StreamableHttpService::new(
        move || {
            Ok(McpSession::new(
                Arc::clone(&server),
                Arc::clone(&defaults),
                Some(Arc::clone(&slots)),
            ))
        },
        Arc::new(sessions),
        config,
    )
}

/// Every method on `/mcp` (rmcp answers the ones MCP does not use).
pub(super) async fn route(State(app): State<App>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if parts.method != Method::POST {
        return app
            .mcp
            .handle(Request::from_parts(parts, body))
            .await
            .into_response();
    }
    let bytes = match read_body(body, app.body_timeout).await {
        Ok(b) => b,
        Err(e) => return error_response(&e),
    };
    if let Some(error) = not_a_message(&bytes) {
        return (StatusCode::OK, Json(error)).into_response();
    }
    app.mcp
        .handle(Request::from_parts(parts, Body::from(bytes)))
        .await
        .into_response()
}

/// The JSON-RPC error for a body that is not one JSON-RPC 2.0 message.
pub fn not_a_message(body: &Bytes) -> Option<Value> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Some(rpc_error(
                Value::Null,
                -32700,
                format!("Parse error: the body is not JSON: {e}"),
            ))
        }
    };
    let is_message = value
        .as_object()
        .is_some_and(|o| o.get("jsonrpc") == Some(&json!("2.0")));
    if is_message {
        return None;
    }
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    Some(rpc_error(
        id,
        -32600,
        "Invalid Request: the body must be one JSON-RPC 2.0 message: an object with \"jsonrpc\": \"2.0\" and a `method` (MCP's `initialize` first)".to_string(),
    ))
}

fn rpc_error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Stops `service` once `stopping` fires: every MCP session and event
/// stream ends (open streams would otherwise hold shutdown for its whole
/// grace).
pub(super) fn cancel_on_stop(mut stopping: super::Stopping, service: McpService) {
    tokio::spawn(async move {
        stopping.wait().await;
        service.config.cancellation_token.cancel();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_that_are_not_json_rpc_get_json_rpc_errors() {
        let e = not_a_message(&Bytes::from_static(b"{")).unwrap();
        assert_eq!(
            (e["jsonrpc"].as_str(), e["error"]["code"].as_i64()),
            (Some("2.0"), Some(-32700))
        );
        assert!(e["id"].is_null());
        let e = not_a_message(&Bytes::from_static(b"{}")).unwrap();
        assert_eq!(e["error"]["code"], -32600);
        let e =
            not_a_message(&Bytes::from_static(br#"{"id": 7, "method": "tools/list"}"#)).unwrap();
        assert_eq!(
            (e["id"].as_i64(), e["error"]["code"].as_i64()),
            (Some(7), Some(-32600))
        );
        assert!(not_a_message(&Bytes::from_static(br#"[{"jsonrpc": "2.0"}]"#)).is_some());
        assert_eq!(
            not_a_message(&Bytes::from_static(
                br#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#
            )),
            None
        );
    }
}
