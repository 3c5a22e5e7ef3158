//! One MCP session: one task, one recorded episode.
//!
//! The task is chosen when the session opens (`initialize`), from the same
//! fields `reset` takes (`task_id`, `world_id`, `seed`, `model`): the
//! server's defaults (`serve --mcp --task …`) overridden by the `/mcp`
//! URL's query string. The choice gives the tool list and the
//! instructions the client shows its model (the task's brief, the
//! customer's opening message, the world's policy). The episode itself
//! starts at the first tool call, so a client that only lists tools
//! records nothing; every call then runs one `step` through
//! [`Server::handle`], exactly as HTTP and `/ws` do. When the session goes
//! away its episode is closed: recorded as abandoned if it was still
//! running.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, InitializeRequestParams, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerInfo,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

use super::tools::TaskTools;
use crate::protocol::{codes, ApiError, Fields, Op, StepResponse};
use crate::service::{Reply, Server};

/// The protocol versions served: those opened by `initialize`. The
/// sessionless revision (2026-07-28) has no session to hold an episode;
/// a client that offers it is told these, and falls back to `initialize`.
const VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2024_11_05,
];

/// The longest model name taken from the client's `clientInfo`.
const MAX_MODEL_CHARS: usize = 200;

/// The MCP server handler of one session.
pub struct McpSession {
    server: Arc<Server>,
    /// Reset fields every session starts from (`serve --mcp --task …`).
    defaults: Arc<Map<String, Value>>,
    /// Open sessions at most, over HTTP: a permit is taken at `initialize`.
    slots: Option<Arc<Semaphore>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    opened: Option<Opened>,
    /// The episode's id once the first call started it.
    episode: Option<String>,
    /// Why the episode is over, and its reward, once it is.
    over: Option<(String, f64)>,
    _permit: Option<OwnedSemaphorePermit>,
}

/// What `initialize` chose.
struct Opened {
    /// The `reset` fields the episode starts with.
    reset: Map<String, Value>,
    tools: TaskTools,
}

impl McpSession {
    pub fn new(
        server: Arc<Server>,
        defaults: Arc<Map<String, Value>>,
        slots: Option<Arc<Semaphore>>,
    ) -> McpSession {
        McpSession {
            server,
            defaults,
            slots,
            state: Mutex::new(State::default()),
        }
    }

    async fn call(&self, params: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let mut st = self.state.lock().await;
        let Some(opened) = &st.opened else {
            return Err(not_initialized());
        };
        let name = params.name.as_ref();
        if !opened.tools.contains(name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{name}`; this task's tools are {}",
                    opened.tools.names()
                ),
                None,
            ));
        }
        let action = match opened
            .tools
            .action(name, params.arguments.clone().unwrap_or_default())
        {
            Ok(a) => a,
            Err(message) => return Ok(tool_error(codes::INVALID_ACTION, &message)),
        };
        let reset = opened.reset.clone();
        if let Some((why, reward)) = &st.over {
            return Ok(tool_error(
                codes::EPISODE_OVER,
                &format!("this session's episode is over ({why}; reward {reward:?}); open a new MCP session for another episode"),
            ));
        }
        let episode = match &st.episode {
            Some(id) => id.clone(),
            None => match run(&self.server, Op::Reset, Value::Object(reset)).await {
                Ok(Reply::Step(s)) => {
                    st.episode = Some(s.episode_id.clone());
                    s.episode_id
                }
                Ok(Reply::Value(_)) => {
                    return Err(ErrorData::internal_error("reset gave no episode", None))
                }
                Err(e) => return Ok(api_error(&e)),
            },
        };
        let step = json!({"episode_id": episode, "action": action});
        match run(&self.server, Op::Step, step).await {
            Ok(Reply::Step(s)) => {
                if s.done {
                    let why = if s.truncated {
                        "the step limit was reached"
                    } else if name == crate::protocol::SUBMIT_TOOL {
                        "submitted"
                    } else {
                        "the task ended"
                    };
                    st.over = Some((why.to_string(), s.reward));
                }
                Ok(step_result(&s))
            }
            Ok(Reply::Value(_)) => Err(ErrorData::internal_error("step gave no result", None)),
            Err(e) => Ok(api_error(&e)),
        }
    }

    /// The task this session runs, from the defaults and the query of the
    /// request that opened it.
    fn open(
        &self,
        request: &InitializeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Opened, ErrorData> {
        let mut reset = (*self.defaults).clone();
        if let Some(parts) = context.extensions.get::<axum::http::request::Parts>() {
            let query = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
                .map_err(|e| {
                    ErrorData::invalid_params(
                        format!("cannot read the /mcp query string: {e}"),
                        None,
                    )
                })?;
            for (k, v) in query.0 {
                reset.insert(k, Value::String(v));
            }
        }
        if !reset.contains_key("model") {
            reset.insert("model".into(), json!(client_model(&request.client_info)));
        }
        let choosing = |e: ApiError| {
            ErrorData::invalid_params(
                format!(
                    "choosing the task (the /mcp query string, or `serve --mcp` flags): {}",
                    e.message
                ),
                Some(e.to_json()),
            )
        };
        let fields =
            Fields::from_value(Op::Reset, Value::Object(reset.clone())).map_err(choosing)?;
        fields.check_known().map_err(choosing)?;
        let (world, task_id) = self.server.chosen_task(&fields).map_err(choosing)?;
        let task = world
            .task(&task_id)
            .ok_or_else(|| ErrorData::internal_error("the chosen task is gone", None))?;
        reset.insert("task_id".into(), json!(task_id));
        reset.insert("world_id".into(), json!(world.meta.id));
        Ok(Opened {
            tools: TaskTools::new(&world, task),
            reset,
        })
    }

    /// What the client shows its model: the task, the customer's opening
    /// message and the policy.
    fn instructions(&self, opened: &Opened) -> String {
        let world_id = opened.reset["world_id"].as_str().unwrap_or_default();
        let task_id = opened.reset["task_id"].as_str().unwrap_or_default();
        let Some(world) = self.server.worlds().find(|w| w.meta.id == world_id) else {
            return String::new();
        };
        let Some(task) = world.task(task_id) else {
            return String::new();
        };
        let user = &world.meta.user;
        let mut text = format!(
            "{}\n\nTask `{}` in {}: {}\n\nThe {user}'s message:\n{}\n\n\
             Use the tools to work; `{}` talks to the {user} and returns their reply. \
             Call `submit` when you are done: it ends the episode and returns the reward.",
            task.instruction,
            task.id,
            world.meta.name,
            task.title,
            task.opening_message,
            super::tools::MESSAGE_TOOL,
        );
        if !world.policy.trim().is_empty() {
            text.push_str("\n\nPolicy:\n");
            text.push_str(world.policy.trim());
        }
        text
    }
}

impl ServerHandler for McpSession {
    fn get_info(&self) -> ServerInfo {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("understudy", env!("CARGO_PKG_VERSION"))
                    .with_title("Understudy")
                    .with_description(
                        "A world's tools, with every session recorded as an episode.",
                    ),
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let opened = self.open(&request, &context)?;
        let mut st = self.state.lock().await;
        if st.opened.is_some() {
            return Err(ErrorData::invalid_request(
                "this session is open already; `initialize` comes once",
                None,
            ));
        }
        if let Some(slots) = &self.slots {
            match Arc::clone(slots).try_acquire_owned() {
                Ok(p) => st._permit = Some(p),
                Err(_) => {
                    return Err(ErrorData::new(
                        ErrorCode::INVALID_REQUEST,
                        "too many MCP sessions are open; close one (DELETE /mcp) first",
                        Some(json!({"code": codes::TOO_MANY_EPISODES})),
                    ))
                }
            }
        }
        context.peer.set_peer_info(request);
        let info = self
            .get_info()
            .with_instructions(self.instructions(&opened));
        st.opened = Some(opened);
        Ok(info)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let st = self.state.lock().await;
        match &st.opened {
            Some(o) => Ok(ListToolsResult::with_all_items(o.tools.list().to_vec())),
            None => Err(not_initialized()),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request).await.map(CallToolResponse::from)
    }
}

impl Drop for McpSession {
    /// Closes the session's episode (abandoned if it is still running).
    fn drop(&mut self) {
        let Some(id) = self.state.get_mut().episode.take() else {
            return;
        };
        let server = Arc::clone(&self.server);
        let close = move || {
            let fields = Fields::from_value(Op::Close, json!({ "episode_id": id }));
            if let Err(e) = fields.and_then(|f| server.handle(Op::Close, f)) {
                tracing::debug!("closing an MCP session's episode: {e}");
            }
        };
        // Closing writes to the store: off the async workers when there are any.
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(close)),
            Err(_) => close(),
        }
    }
}

fn not_initialized() -> ErrorData {
    ErrorData::invalid_request(
        "this session has no task: open it with `initialize` first",
        None,
    )
}

/// `name version` of the client (e.g. `claude-ai 0.1.0`), recorded as the
/// episode's model when the session names none.
fn client_model(client: &Implementation) -> String {
    let text = format!("{} {}", client.name.trim(), client.version.trim());
    let clean: String = text
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_MODEL_CHARS)
        .collect();
    if clean.trim().is_empty() {
        "unknown".to_string()
    } else {
        clean
    }
}

/// Runs one operation on the blocking pool, as `/ws` does.
async fn run(server: &Arc<Server>, op: Op, body: Value) -> Result<Reply, ApiError> {
    crate::run_blocking(server, op, Fields::from_value(op, body)?).await
}

/// A step as a tool result: the observation's text for the model (and the
/// reward once the episode is over), the whole step response as
/// structured content, and `isError` when the world refused the call.
fn step_result(s: &StepResponse) -> CallToolResult {
    let mut text = s.observation.text.clone();
    if s.done {
        text.push_str(&format!(
            "\n\n[The episode is over{}. Reward: {:?}]",
            if s.truncated {
                " (the step limit was reached)"
            } else {
                ""
            },
            s.reward
        ));
    }
    let mut result = if s.observation.ok {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(json!({
        "episode_id": s.episode_id,
        "record_id": s.record_id,
        "observation": s.observation,
        "reward": s.reward,
        "done": s.done,
        "terminated": s.terminated,
        "truncated": s.truncated,
        "info": s.info,
    }));
    result
}

/// A refused request as a tool result the model can read.
fn api_error(e: &ApiError) -> CallToolResult {
    let mut result = tool_error(e.code, &e.message);
    result.structured_content = Some(json!({ "error": e.to_json() }));
    result
}

fn tool_error(code: &str, message: &str) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!("Error: {message}"))]);
    result.structured_content = Some(json!({ "error": {"code": code, "message": message} }));
    result
}
