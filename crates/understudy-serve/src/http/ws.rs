//! OpenEnv's WebSocket sessions on `/ws`: what openenv-core's `EnvClient`
//! (and so `GenericEnvClient`) speaks.
//!
//! One connection is one session. The client sends
//! `{"type": "reset", "data": {...}}`, `{"type": "step", "data": <action>}`,
//! `{"type": "state"}` or `{"type": "close"}`; the server answers
//! `{"type": "observation", "data": <step response>}`,
//! `{"type": "state", "data": <state>}` or
//! `{"type": "error", "data": {"message", "code", ...}}` (`close` gets no
//! answer: the server closes the socket).
//!
//! **No second execution path.** Each message becomes the [`Op`] the HTTP
//! routes run, through [`Server::handle`] on the blocking pool, so a
//! WebSocket episode is recorded like any other. The connection remembers
//! its episode's id; a new `reset` closes the previous episode first
//! (recorded as abandoned if it was still running), and so does the end of
//! the connection, however it ends.
//!
//! **Bounded.** The upgrade request passes the same [`super::Guard`] as
//! every route (Host, Origin, bearer token). A message is at most
//! [`super::MAX_BODY`] bytes (larger ones close the socket with 1009); a
//! connection with no request for the server's idle timeout is closed
//! (1008), as its episode would be; shutdown closes every socket (1001).
//! Framing errors (not JSON, not an object, an unknown `type`, fields a
//! message does not take) are answered with an error and the session goes
//! on.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket};
use serde_json::{json, Map, Value};
use tokio::sync::OwnedSemaphorePermit;

use super::listen::Stopping;
use crate::protocol::{codes, kind_of, ApiError, Fields, Op};
use crate::service::{Reply, Server};

/// OpenEnv's `WSErrorCode` values this server sends.
pub mod error_codes {
    pub const INVALID_JSON: &str = "INVALID_JSON";
    pub const UNKNOWN_TYPE: &str = "UNKNOWN_TYPE";
    pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
    pub const EXECUTION_ERROR: &str = "EXECUTION_ERROR";
    pub const CAPACITY_REACHED: &str = "CAPACITY_REACHED";
}

/// What one session needs from the server.
pub struct Session {
    pub server: Arc<Server>,
    pub stopping: Stopping,
    /// A connection without a request for this long is closed.
    pub idle_timeout: Duration,
    /// Held for the session's life: WebSocket sessions are capped.
    pub permit: OwnedSemaphorePermit,
}

/// A message read, or why the session ends.
enum Incoming {
    Text(String),
    /// Answered with an error; the session goes on.
    Refused(ApiError),
    /// The socket ends, with this close frame (if any is still possible).
    End(Option<CloseFrame>),
}

/// Runs one session until the client closes it, goes quiet or breaks the
/// protocol beyond repair, or the server stops.
pub async fn run(mut socket: WebSocket, mut session: Session) {
    let mut episode: Option<String> = None;
    let close = loop {
        let incoming = tokio::select! {
            _ = session.stopping.wait() => Incoming::End(Some(frame(close_code::AWAY, "the server is shutting down"))),
            got = tokio::time::timeout(session.idle_timeout, next_request(&mut socket)) => match got {
                Ok(incoming) => incoming,
                Err(_) => Incoming::End(Some(frame(
                    close_code::POLICY,
                    &format!("no request for {:.0}s (the idle timeout)", session.idle_timeout.as_secs_f64()),
                ))),
            },
        };
        let reply = match incoming {
            Incoming::End(close) => break close,
            Incoming::Refused(e) => error_message(&e),
            Incoming::Text(text) => match handle(&session.server, &mut episode, &text).await {
                Handled::Reply(reply) => reply,
                Handled::Close => break Some(frame(close_code::NORMAL, "closed")),
            },
        };
        if socket.send(Message::text(reply.to_string())).await.is_err() {
            break None;
        }
    };
    if let Some(id) = episode.take() {
        close_episode(&session.server, id).await;
    }
    if let Some(close) = close {
        let _ = socket.send(Message::Close(Some(close))).await;
    }
    drop(session.permit);
}

fn frame(code: u16, reason: &str) -> CloseFrame {
    // A close reason is at most 123 bytes.
    let mut reason = reason.to_string();
    while reason.len() > 123 {
        reason.pop();
    }
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

/// The next request: a text message. Pings are answered by the socket
/// itself and skipped here; so are pongs.
async fn next_request(socket: &mut WebSocket) -> Incoming {
    loop {
        return match socket.recv().await {
            None => Incoming::End(None),
            Some(Ok(Message::Text(t))) => Incoming::Text(t.as_str().to_string()),
            Some(Ok(Message::Binary(b))) => match String::from_utf8(b.to_vec()) {
                Ok(text) => Incoming::Text(text),
                Err(_) => Incoming::Refused(ApiError::invalid_json(
                    "a binary message that is not UTF-8 text; send JSON text",
                )),
            },
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Close(_))) => Incoming::End(None),
            Some(Err(e)) => Incoming::End(Some(read_error_frame(&e))),
        };
    }
}

/// The close frame for a message that could not be read.
fn read_error_frame(e: &axum::Error) -> CloseFrame {
    let too_big = std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<tungstenite::Error>())
        .is_some_and(|t| matches!(t, tungstenite::Error::Capacity(_)));
    if too_big {
        frame(
            close_code::SIZE,
            &format!("a message is larger than {} bytes", super::MAX_BODY),
        )
    } else {
        frame(
            close_code::PROTOCOL,
            &format!("cannot read the message: {e}"),
        )
    }
}

enum Handled {
    Reply(Value),
    Close,
}

/// One text message: parsed, run, answered.
async fn handle(server: &Arc<Server>, episode: &mut Option<String>, text: &str) -> Handled {
    let message: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Handled::Reply(error_message(&ApiError::invalid_json(format!(
                "the message is not valid JSON: {e}"
            ))))
        }
    };
    let parsed = match parse(message) {
        Ok(p) => p,
        Err(e) => return Handled::Reply(error_message(&e)),
    };
    let reply = match parsed {
        Parsed::Close => return Handled::Close,
        Parsed::Reset(data) => reset(server, episode, data).await,
        Parsed::Step(action) => match episode {
            None => Err(ApiError::invalid_request(
                "there is no episode in this session yet; send `reset` first",
            )),
            Some(id) => {
                let fields = Fields::from_value(
                    Op::Step,
                    json!({"episode_id": id, "action": Value::Object(action)}),
                );
                match fields {
                    Ok(f) => run_op(server, Op::Step, f)
                        .await
                        .map(|r| json!({"type": "observation", "data": r.into_value()})),
                    Err(e) => Err(e),
                }
            }
        },
        Parsed::State => match episode {
            // OpenEnv's State before any reset.
            None => Ok(json!({"type": "state", "data": {"episode_id": null, "step_count": 0}})),
            Some(id) => match Fields::from_value(Op::State, json!({"episode_id": id})) {
                Ok(f) => run_op(server, Op::State, f)
                    .await
                    .map(|r| json!({"type": "state", "data": r.into_value()})),
                Err(e) => Err(e),
            },
        },
    };
    Handled::Reply(reply.unwrap_or_else(|e| error_message(&e)))
}

/// A message, checked against OpenEnv's message types.
#[derive(Debug, PartialEq)]
enum Parsed {
    Reset(Map<String, Value>),
    Step(Map<String, Value>),
    State,
    Close,
}

const TYPES: &str = "`reset`, `step`, `state` or `close`";

fn parse(message: Value) -> Result<Parsed, ApiError> {
    let Value::Object(mut map) = message else {
        return Err(ApiError::invalid_request(format!(
            "a message must be a JSON object with a `type` ({TYPES}), not {}",
            kind_of(&message)
        )));
    };
    let kind = match map.remove("type") {
        Some(Value::String(t)) => t,
        None => {
            return Err(unknown_type(format!(
                "the message has no `type`; expected {TYPES}"
            )))
        }
        Some(other) => {
            return Err(ApiError::invalid_request(format!(
                "`type` must be text ({TYPES}), not {}",
                kind_of(&other)
            )))
        }
    };
    let takes_data = matches!(kind.as_str(), "reset" | "step");
    if let Some(extra) = map.keys().find(|k| !(takes_data && *k == "data")) {
        if matches!(kind.as_str(), "reset" | "step" | "state" | "close") {
            return Err(ApiError::invalid_request(format!(
                "a `{kind}` message takes {}, not `{extra}`",
                if takes_data {
                    "only `type` and `data`"
                } else {
                    "only `type`"
                }
            )));
        }
    }
    let data = |map: &mut Map<String, Value>, required: bool| {
        match map.remove("data") {
        Some(Value::Object(d)) => Ok(d),
        None | Some(Value::Null) if !required => Ok(Map::new()),
        None | Some(Value::Null) => Err(ApiError::invalid_request(format!(
            "a `{kind}` message needs `data`: the action, e.g. {{\"tool\": name, \"args\": {{...}}}}"
        ))),
        Some(other) => Err(ApiError::invalid_request(format!(
            "`data` of a `{kind}` message must be a JSON object, not {}",
            kind_of(&other)
        ))),
    }
    };
    match kind.as_str() {
        "reset" => Ok(Parsed::Reset(data(&mut map, false)?)),
        "step" => Ok(Parsed::Step(data(&mut map, true)?)),
        "state" => Ok(Parsed::State),
        "close" => Ok(Parsed::Close),
        "mcp" => Err(unknown_type(
            "MCP messages are not served over /ws; send reset, step, state or close".to_string(),
        )),
        other => Err(unknown_type(format!(
            "unknown message type `{other}`; expected {TYPES}"
        ))),
    }
}

/// An unknown `type`: OpenEnv's `UNKNOWN_TYPE`.
fn unknown_type(message: String) -> ApiError {
    ApiError::new(400, codes::UNKNOWN_TYPE, message)
}

/// Starts an episode, closing this session's previous one first.
async fn reset(
    server: &Arc<Server>,
    episode: &mut Option<String>,
    data: Map<String, Value>,
) -> Result<Value, ApiError> {
    let fields = Fields::from_value(Op::Reset, Value::Object(data))?;
    // Checked before the previous episode is closed: a reset with a typo
    // must not end the running one.
    fields.check_known()?;
    if let Some(previous) = episode.take() {
        close_episode(server, previous).await;
    }
    let reply = run_op(server, Op::Reset, fields).await?.into_value();
    *episode = reply
        .get("episode_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(json!({"type": "observation", "data": reply}))
}

/// Closes the episode (abandoned if still running); an episode already
/// gone (idle timeout, shutdown) is fine.
async fn close_episode(server: &Arc<Server>, id: String) {
    if let Ok(fields) = Fields::from_value(Op::Close, json!({ "episode_id": id })) {
        if let Err(e) = run_op(server, Op::Close, fields).await {
            tracing::debug!(episode = %id, "closing the session's episode: {e}");
        }
    }
}

async fn run_op(server: &Arc<Server>, op: Op, fields: Fields) -> Result<Reply, ApiError> {
    crate::run_blocking(server, op, fields).await
}

/// `{"type": "error", "data": {"message", "code", "api_code", "status"}}`:
/// `code` is OpenEnv's, `api_code` and `status` Understudy's (as over
/// HTTP).
pub fn error_message(e: &ApiError) -> Value {
    let code = match e.code {
        codes::INVALID_JSON => error_codes::INVALID_JSON,
        codes::UNKNOWN_TYPE => error_codes::UNKNOWN_TYPE,
        codes::TOO_MANY_EPISODES => error_codes::CAPACITY_REACHED,
        _ if e.status == 400 => error_codes::VALIDATION_ERROR,
        _ => error_codes::EXECUTION_ERROR,
    };
    json!({
        "type": "error",
        "data": {"message": e.message, "code": code, "api_code": e.code, "status": e.status},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_checked_against_openenv_types() {
        assert_eq!(
            parse(json!({"type": "reset"})),
            Ok(Parsed::Reset(Map::new()))
        );
        assert_eq!(
            parse(json!({"type": "step", "data": {"message": "hi"}})),
            Ok(Parsed::Step(
                json!({"message": "hi"}).as_object().cloned().unwrap()
            ))
        );
        assert_eq!(parse(json!({"type": "state"})), Ok(Parsed::State));
        assert_eq!(parse(json!({"type": "close"})), Ok(Parsed::Close));
        let code = |v: Value| parse(v).unwrap_err().code;
        assert_eq!(code(json!({"type": "launch"})), codes::UNKNOWN_TYPE);
        assert_eq!(
            code(json!({"type": "mcp", "data": {}})),
            codes::UNKNOWN_TYPE
        );
        assert_eq!(code(json!({"data": {}})), codes::UNKNOWN_TYPE);
        assert_eq!(code(json!([1])), codes::INVALID_REQUEST);
        assert_eq!(code(json!({"type": 3})), codes::INVALID_REQUEST);
        assert_eq!(code(json!({"type": "step"})), codes::INVALID_REQUEST);
        assert_eq!(
            code(json!({"type": "step", "data": [1]})),
            codes::INVALID_REQUEST
        );
        let e = parse(json!({"type": "state", "data": {}})).unwrap_err();
        assert!(e.message.contains("`data`"), "{}", e.message);
    }

    #[test]
    fn errors_carry_openenv_codes_and_understudy_codes() {
        let m = error_message(&ApiError::new(429, codes::TOO_MANY_EPISODES, "full"));
        assert_eq!(m["type"], "error");
        assert_eq!(m["data"]["code"], error_codes::CAPACITY_REACHED);
        assert_eq!(m["data"]["api_code"], codes::TOO_MANY_EPISODES);
        assert_eq!(m["data"]["status"], 429);
        let m = error_message(&ApiError::invalid_request("x"));
        assert_eq!(m["data"]["code"], error_codes::VALIDATION_ERROR);
        let m = error_message(&ApiError::new(409, codes::EPISODE_OVER, "over"));
        assert_eq!(m["data"]["code"], error_codes::EXECUTION_ERROR);
    }
}
