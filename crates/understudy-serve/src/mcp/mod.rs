//! The Model Context Protocol (rmcp): a task's tools served to any MCP
//! client (Claude Desktop, IDE agents, the official SDKs), over stdio
//! (`understudy serve --mcp`) and streamable HTTP (`/mcp` on the HTTP
//! server, behind its guard). See `docs/agent-api.md`, "MCP".
//!
//! **No second execution path.** An MCP session ([`McpSession`]) is one
//! episode on the same [`Server`] as HTTP and `/ws`: its task is chosen
//! from `reset`'s fields when it opens, its first tool call runs `reset`,
//! every call runs one `step`, and its end runs `close`. So an MCP episode
//! is recorded, capped, timed out and scored exactly like any other.
//!
//! **Two kinds of failure.** A call the world refuses (bad arguments, a
//! failed guard) is a recorded step whose tool result has `isError` and
//! the world's message, as it would be an `ok: false` observation over
//! HTTP; a call the server refuses before any step (arguments of
//! `send_message`, the episode cap, an episode already over) is an
//! `isError` result too, naming what is wrong. What is not a tool call at
//! all (an unknown tool, a line that is not JSON-RPC, no `initialize`) is
//! a JSON-RPC error.

mod lines;
pub mod session;
pub mod tools;

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::protocol::{ApiError, Fields, Op};
use crate::service::Server;

pub use lines::{parse_line, LineTransport, Refusal};
pub use session::McpSession;
pub use tools::{TaskTools, MESSAGE_TOOL};

/// Checks the reset fields every session will start from (`serve --mcp
/// --task …`), so that a wrong flag fails at start, not at the client's
/// first request.
pub fn check_defaults(server: &Server, defaults: &Map<String, Value>) -> Result<(), ApiError> {
    let fields = Fields::from_value(Op::Reset, Value::Object(defaults.clone()))?;
    fields.check_known()?;
    server.chosen_task(&fields).map(|_| ())
}

/// Serves one MCP session on `input` and `output` (standard input and
/// output) until the input ends or the client breaks the handshake. The
/// caller closes the server's sessions afterwards, as for JSON lines.
pub async fn serve_stdio<R, W>(
    server: Arc<Server>,
    defaults: Map<String, Value>,
    input: R,
    output: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let session = McpSession::new(server, Arc::new(defaults), None);
    let transport = LineTransport::new(input, output, crate::stdio::MAX_LINE);
    match rmcp::serve_server(session, transport).await {
        Ok(running) => {
            if let Err(e) = running.waiting().await {
                tracing::error!("the MCP session failed: {e}");
            }
            Ok(())
        }
        Err(e) => {
            tracing::warn!("the MCP session ended before it opened: {e}");
            Ok(())
        }
    }
}
