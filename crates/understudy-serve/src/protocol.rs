//! The wire format shared by both transports: request fields, error
//! responses, step/reset responses and the JSON Schemas served by `schema`.
//!
//! Requests are parsed field by field rather than through derived serde
//! structs so that every rejection names the field and what was expected;
//! serde's own messages ("invalid type: string, expected u64") do not.

use serde::Serialize;
use serde_json::{json, Map, Value};

use understudy::action::Action;
use understudy::observation::Observation;
use understudy::world::ToolSpec;

/// A request the server refuses. It crosses the wire as
/// `{"error": {"code", "message"}}` (HTTP, with `status`) or inside the
/// stdio response line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// The HTTP status the error maps to; stdio responses carry it too so
    /// clients can share one error table.
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

    pub fn invalid_json(message: impl Into<String>) -> ApiError {
        ApiError::new(400, codes::INVALID_JSON, message)
    }

    pub fn invalid_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, codes::INVALID_REQUEST, message)
    }

    pub fn to_json(&self) -> Value {
        json!({"code": self.code, "message": self.message, "status": self.status})
    }
}

/// Stable error codes. Clients branch on these, never on messages.
pub mod codes {
    /// The request body or line is not JSON.
    pub const INVALID_JSON: &str = "invalid_json";
    /// A field is missing, has the wrong type, or is not known.
    pub const INVALID_REQUEST: &str = "invalid_request";
    /// The `action` is not one of the accepted shapes.
    pub const INVALID_ACTION: &str = "invalid_action";
    /// The stdio `op` is not one the server knows.
    pub const UNKNOWN_OP: &str = "unknown_op";
    /// A `/ws` message's `type` is not one the server knows.
    pub const UNKNOWN_TYPE: &str = "unknown_type";
    /// No such HTTP route.
    pub const NOT_FOUND: &str = "not_found";
    pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
    /// HTTP: `GET /ws` without a WebSocket handshake.
    pub const UPGRADE_REQUIRED: &str = "upgrade_required";
    /// The body (or line) is larger than the limit.
    pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
    /// HTTP: the body did not arrive in time.
    pub const REQUEST_TIMEOUT: &str = "request_timeout";
    /// HTTP: a POST whose `Content-Type` is not `application/json`.
    pub const UNSUPPORTED_MEDIA_TYPE: &str = "unsupported_media_type";
    /// HTTP: `Origin` is present and not loopback (a web page).
    pub const FORBIDDEN_ORIGIN: &str = "forbidden_origin";
    /// HTTP: `Host` does not name this server (DNS rebinding).
    pub const FORBIDDEN_HOST: &str = "forbidden_host";
    /// HTTP: the server has a token and the request does not carry it.
    pub const UNAUTHORIZED: &str = "unauthorized";
    pub const UNKNOWN_WORLD: &str = "unknown_world";
    pub const UNKNOWN_TASK: &str = "unknown_task";
    /// No open episode has that id (never existed, closed, or timed out).
    pub const UNKNOWN_EPISODE: &str = "unknown_episode";
    /// A client-chosen `episode_id` is already open.
    pub const EPISODE_EXISTS: &str = "episode_exists";
    /// The episode terminated or was truncated; reset to start another.
    pub const EPISODE_OVER: &str = "episode_over";
    /// `--max-concurrent` episodes are open; nothing is queued.
    pub const TOO_MANY_EPISODES: &str = "too_many_episodes";
    /// The user simulator failed or timed out; the step was not taken.
    pub const USER_SIM_FAILED: &str = "user_sim_failed";
    /// The trajectory store failed; the step was not recorded or applied.
    pub const STORE: &str = "store";
    pub const INTERNAL: &str = "internal";
}

/// The operations both transports expose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Reset,
    Step,
    State,
    Close,
    Schema,
    Tasks,
    Health,
    Metadata,
}

impl Op {
    pub const ALL: [Op; 8] = [
        Op::Reset,
        Op::Step,
        Op::State,
        Op::Close,
        Op::Schema,
        Op::Tasks,
        Op::Health,
        Op::Metadata,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Reset => "reset",
            Op::Step => "step",
            Op::State => "state",
            Op::Close => "close",
            Op::Schema => "schema",
            Op::Tasks => "tasks",
            Op::Health => "health",
            Op::Metadata => "metadata",
        }
    }

    /// The fields the op accepts: the one list that both refuses unknown
    /// fields ([`Fields::check_known`]) and documents them (`/openapi.json`).
    pub fn fields(self) -> &'static [FieldSpec] {
        match self {
            Op::Reset => fields::RESET,
            Op::Step => fields::STEP,
            Op::State | Op::Close => fields::EPISODE_ONLY,
            Op::Schema => fields::SCHEMA,
            Op::Tasks => fields::TASKS,
            Op::Health | Op::Metadata => &[],
        }
    }

    pub fn parse(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }
}

/// The JSON type of a request field, for its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Text,
    /// A non-negative integer (text digits in a query string).
    Unsigned,
    Number,
    /// An action, in any shape of [`action_schema`].
    Action,
}

/// One field an op accepts.
#[derive(Debug, Clone, Copy)]
pub struct FieldSpec {
    pub name: &'static str,
    pub kind: FieldKind,
    pub required: bool,
    pub doc: &'static str,
}

impl FieldSpec {
    const fn required(name: &'static str, kind: FieldKind, doc: &'static str) -> FieldSpec {
        FieldSpec {
            name,
            kind,
            required: true,
            doc,
        }
    }

    const fn optional(name: &'static str, kind: FieldKind, doc: &'static str) -> FieldSpec {
        FieldSpec {
            name,
            kind,
            required: false,
            doc,
        }
    }

    /// The field's JSON Schema.
    pub fn schema(&self) -> Value {
        let mut schema = match self.kind {
            FieldKind::Text => json!({"type": "string"}),
            FieldKind::Unsigned => json!({"type": "integer", "minimum": 0}),
            FieldKind::Number => json!({"type": "number"}),
            // Not tied to one world: the world's own word is in `/schema`.
            FieldKind::Action => action_schema("user"),
        };
        if let Some(o) = schema.as_object_mut() {
            o.remove("$schema");
            o.insert("description".into(), json!(self.doc));
        }
        schema
    }
}

/// What each op accepts (see [`Op::fields`]).
mod fields {
    use super::FieldKind::{Action, Number, Text, Unsigned};
    use super::FieldSpec;

    const EPISODE: FieldSpec = FieldSpec::required("episode_id", Text, "The id `reset` returned.");

    pub const RESET: &[FieldSpec] = &[
        FieldSpec::optional("task_id", Text, "A task id, as listed by `tasks`. Without it the task is chosen by `seed`: the served tasks in `tasks` order (only `world_id`'s when given), index `seed` modulo their number."),
        FieldSpec::optional("world_id", Text, "A world id, as listed by `tasks`; needed only if two served worlds share `task_id`, or to choose among one world's tasks when `task_id` is left out."),
        FieldSpec::optional("seed", Unsigned, "The episode's seed (default 0)."),
        FieldSpec::optional("episode_id", Text, "Your own handle for the episode: 1 to 128 of `A-Z a-z 0-9 - _ . :`; default the trajectory's id."),
        FieldSpec::optional("model", Text, "The agent's model, recorded as the actor (default `unknown`)."),
    ];

    pub const STEP: &[FieldSpec] = &[
        EPISODE,
        FieldSpec::required(
            "action",
            Action,
            "The action (see the `action` schema of `schema`).",
        ),
        FieldSpec::optional("timeout_s", Number, "OpenEnv's; accepted and ignored."),
        FieldSpec::optional("request_id", Text, "OpenEnv's; accepted and ignored."),
    ];

    pub const EPISODE_ONLY: &[FieldSpec] = &[EPISODE];

    pub const SCHEMA: &[FieldSpec] = &[
        FieldSpec::optional("world_id", Text, "A world id; without it (and without `task_id`) while several worlds are served, the tools are listed by world in `tools_by_world`."),
        FieldSpec::optional("task_id", Text, "Only this task's tools."),
    ];

    pub const TASKS: &[FieldSpec] = &[FieldSpec::optional(
        "world_id",
        Text,
        "Only this world's tasks.",
    )];
}

/// A request's fields, with accessors whose errors name the field.
#[derive(Debug, Clone)]
pub struct Fields {
    op: Op,
    map: Map<String, Value>,
}

impl Fields {
    /// `body` must be an object; `null` counts as no fields.
    pub fn from_value(op: Op, body: Value) -> Result<Fields, ApiError> {
        match body {
            Value::Object(map) => Ok(Fields { op, map }),
            Value::Null => Ok(Fields {
                op,
                map: Map::new(),
            }),
            other => Err(ApiError::invalid_request(format!(
                "the body of `{}` must be a JSON object, not {}",
                op.name(),
                kind_of(&other)
            ))),
        }
    }

    /// Query-string parameters: every value is text.
    pub fn from_query(op: Op, pairs: impl IntoIterator<Item = (String, String)>) -> Fields {
        Fields {
            op,
            map: pairs
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect(),
        }
    }

    /// Refuses fields the op does not know ([`Op::fields`]): a typo such as
    /// `seeds` must not silently run with the default.
    pub fn check_known(&self) -> Result<(), ApiError> {
        let known: Vec<&str> = self.op.fields().iter().map(|f| f.name).collect();
        self.only(&known)
    }

    /// Refuses fields not in `known`.
    pub fn only(&self, known: &[&str]) -> Result<(), ApiError> {
        let unknown: Vec<&str> = self
            .map
            .keys()
            .map(String::as_str)
            .filter(|k| !known.contains(k))
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let list = |names: &[&str]| {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Err(ApiError::invalid_request(format!(
            "unknown field(s) {} in `{}`; expected only {}",
            list(&unknown),
            self.op.name(),
            if known.is_empty() {
                "no fields".to_string()
            } else {
                list(known)
            }
        )))
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    pub fn required(&self, name: &str, what: &str) -> Result<&Value, ApiError> {
        self.get(name).ok_or_else(|| {
            ApiError::invalid_request(format!(
                "`{}` needs the field `{name}` ({what})",
                self.op.name()
            ))
        })
    }

    pub fn text(&self, name: &str, what: &str) -> Result<Option<String>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong_type(name, what, other)),
        }
    }

    pub fn required_text(&self, name: &str, what: &str) -> Result<String, ApiError> {
        let value = self.required(name, what)?;
        match value {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            other => Err(self.wrong_type(name, what, other)),
        }
    }

    /// A non-negative integer; text digits are accepted because query
    /// strings carry nothing else.
    pub fn unsigned(&self, name: &str, what: &str) -> Result<Option<u64>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
            Some(Value::String(s)) if s.parse::<u64>().is_ok() => Ok(s.parse::<u64>().ok()),
            Some(other) => Err(self.wrong_type(name, what, other)),
        }
    }

    fn wrong_type(&self, name: &str, what: &str, got: &Value) -> ApiError {
        ApiError::invalid_request(format!(
            "`{name}` in `{}` must be {what}, not {}",
            self.op.name(),
            describe(got)
        ))
    }
}

/// The JSON type of `v`, for messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `v`'s type and a short excerpt, for messages.
fn describe(v: &Value) -> String {
    let mut shown = v.to_string();
    if shown.chars().count() > 60 {
        shown = shown.chars().take(57).collect::<String>() + "...";
    }
    format!("{} ({shown})", kind_of(v))
}

/// The name of the pseudo-tool that submits the episode, offered to agents
/// unless the world declares a tool of that name itself.
pub const SUBMIT_TOOL: &str = "submit";

/// What a `step` asks for: a world action, or ending the episode as the
/// performer's submission (what the expert's Submit button does). Tasks
/// whose natural end is not a tool need the latter.
#[derive(Debug, Clone, PartialEq)]
pub enum Move {
    Act(Action),
    Submit { final_message: Option<String> },
}

/// The largest `action` accepted, as JSON bytes (tool arguments included):
/// far beyond any real tool call, and small enough that one call cannot
/// grow the server's memory much.
pub const MAX_ACTION_BYTES: usize = 1 << 20;

/// Parses the `action` field: `{"submit": true | {"final_message": text}}`,
/// or any shape [`Action::from_json`] accepts. A call of the `submit`
/// pseudo-tool comes back as an action; the caller knows whether the world
/// has a real tool of that name.
pub fn parse_move(fields: &Fields) -> Result<Move, ApiError> {
    let value = fields.required(
        "action",
        "{\"tool\": name, \"args\": {...}}, {\"message\": text} or {\"submit\": true}",
    )?;
    let invalid = |e: String| {
        ApiError::new(
            400,
            codes::INVALID_ACTION,
            format!("`action` is not a valid action: {e}"),
        )
    };
    let size = json_size(value);
    if size > MAX_ACTION_BYTES {
        return Err(invalid(format!(
            "it is {size} bytes of JSON; an action may be at most {MAX_ACTION_BYTES} bytes"
        )));
    }
    if let Some(submit) = value.as_object().and_then(|o| o.get("submit")) {
        return match submit {
            Value::Bool(true) => Ok(Move::Submit {
                final_message: None,
            }),
            Value::Object(args) => submit_args(args).map_err(invalid),
            other => Err(invalid(format!(
                "`submit` must be true or {{\"final_message\": text}}, not {}",
                kind_of(other)
            ))),
        };
    }
    Action::from_json(value).map(Move::Act).map_err(invalid)
}

/// How many bytes `value` takes as compact JSON, without building the text.
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// The arguments of a submission: an optional `final_message`.
pub fn submit_args(args: &Map<String, Value>) -> Result<Move, String> {
    if let Some(k) = args.keys().find(|k| *k != "final_message") {
        return Err(format!("`submit` takes only `final_message`, not `{k}`"));
    }
    match args.get("final_message") {
        None | Some(Value::Null) => Ok(Move::Submit {
            final_message: None,
        }),
        Some(Value::String(s)) => Ok(Move::Submit {
            final_message: Some(s.clone()),
        }),
        Some(other) => Err(format!(
            "`final_message` must be text, not {}",
            kind_of(other)
        )),
    }
}

/// The `submit` pseudo-tool as an OpenAI function spec; `user` is what
/// the world calls the person served (`customer`, `patient`).
pub fn submit_function(user: &str) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": SUBMIT_TOOL,
            "description": format!("Finish the task: submit your work when it is done. Ends the episode. The final message to the {user} defaults to the last message you sent."),
            "parameters": {
                "type": "object",
                "properties": {
                    "final_message": {"type": "string", "description": format!("The final answer to the {user}, if not your last message.")}
                },
                "additionalProperties": false
            }
        }
    })
}

/// What `reset` and `step` return, in OpenEnv's and Gymnasium's shape.
#[derive(Debug, Clone, Serialize)]
pub struct StepResponse {
    /// The handle for later `step`, `state` and `close` calls.
    pub episode_id: String,
    /// The trajectory's id in the store; equals `episode_id` unless the
    /// client chose its own.
    pub record_id: String,
    pub observation: Observation,
    pub reward: f64,
    /// `terminated || truncated`, for OpenEnv clients.
    pub done: bool,
    pub terminated: bool,
    pub truncated: bool,
    /// Deterministic given world, task, seed and actions: no wall-clock
    /// times or ids, so seeded runs compare equal.
    pub info: Map<String, Value>,
}

/// A tool as an OpenAI function spec, the shape most agent code consumes.
pub fn openai_function(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        }
    })
}

/// The JSON Schema of an action in every accepted shape; `user` as for
/// [`submit_function`].
pub fn action_schema(user: &str) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Action",
        "description": format!("One step: call a tool, or say something to the {user}."),
        "anyOf": [
            {
                "title": "Tool call",
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {"type": "string", "description": "A tool name from `tools`."},
                    "args": {"type": "object", "description": "Arguments matching the tool's `parameters`."}
                }
            },
            {
                "title": "Submit (ends the episode)",
                "type": "object",
                "required": ["submit"],
                "properties": {
                    "submit": {
                        "anyOf": [
                            {"const": true},
                            {"type": "object", "properties": {"final_message": {"type": "string"}}, "additionalProperties": false}
                        ]
                    }
                }
            },
            {
                "title": format!("Message to the {user}"),
                "type": "object",
                "required": ["message"],
                "properties": {"message": {"type": "string"}}
            },
            {
                "title": "OpenAI tool call",
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "arguments": {
                        "type": ["object", "string"],
                        "description": "An object, or a JSON string encoding one."
                    }
                }
            },
            {
                "title": "OpenAI tool call, wrapped",
                "type": "object",
                "required": ["function"],
                "properties": {
                    "type": {"const": "function"},
                    "id": {"type": "string"},
                    "function": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "arguments": {"type": ["object", "string"]}
                        }
                    }
                }
            },
            {
                "title": "τ-bench action",
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "description": "`respond` with kwargs.content is a message."},
                    "kwargs": {"type": "object"}
                }
            }
        ]
    })
}

/// JSON Schema of an observation.
pub fn observation_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Observation",
        "type": "object",
        "required": ["ok", "text"],
        "properties": {
            "ok": {"type": "boolean", "description": "False when the call failed; the step still counts."},
            "content": {"description": "The structured result (any JSON). For a message: {\"reply\": text}."},
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {"enum": ["unknown_tool", "invalid_arguments", "guard_failed", "tool_failed", "script_failed"]},
                    "message": {"type": "string"}
                }
            },
            "text": {"type": "string", "description": "The result rendered for a language model."}
        }
    })
}

/// JSON Schema of what `state` returns.
pub fn state_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "State",
        "type": "object",
        "required": ["episode_id", "record_id", "world_id", "task_id", "seed", "model", "status", "step_count", "max_steps", "clock", "done", "terminated", "truncated", "reward"],
        "properties": {
            "episode_id": {"type": "string"},
            "record_id": {"type": "string", "description": "The trajectory's id in the store."},
            "world_id": {"type": "string"},
            "task_id": {"type": "string"},
            "seed": {"type": "integer", "minimum": 0},
            "model": {"type": "string"},
            "status": {"enum": ["in_progress", "submitted", "abandoned"]},
            "step_count": {"type": "integer", "minimum": 0},
            "max_steps": {"type": "integer", "minimum": 1},
            "clock": {"type": "string", "description": "The simulated clock (RFC 3339)."},
            "done": {"type": "boolean"},
            "terminated": {"type": "boolean"},
            "truncated": {"type": "boolean"},
            "reward": {"type": "number", "description": "The final reward once done, else 0."}
        }
    })
}

/// The Gymnasium id of a task: `understudy/<world>-<task>`.
pub fn gym_id(world_id: &str, task_id: &str) -> String {
    format!("understudy/{world_id}-{task_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_name_the_field_and_expectation() {
        let f = Fields::from_value(Op::Reset, json!({"seed": "abc", "task_id": 3})).unwrap();
        let e = f.unsigned("seed", "a non-negative integer").unwrap_err();
        assert_eq!(e.code, codes::INVALID_REQUEST);
        assert!(e.message.contains("`seed`") && e.message.contains("non-negative integer"));
        let e = f.required_text("task_id", "a task id").unwrap_err();
        assert!(e.message.contains("`task_id`") && e.message.contains("a number"));
        let e = f.only(&["seed"]).unwrap_err();
        assert!(e.message.contains("`task_id`"), "{}", e.message);
        assert!(Fields::from_value(Op::Step, json!([1])).is_err());
    }

    #[test]
    fn an_oversized_action_is_refused() {
        let big = "x".repeat(MAX_ACTION_BYTES);
        let f = Fields::from_value(
            Op::Step,
            json!({"action": {"tool": "t", "args": {"note": big}}}),
        )
        .unwrap();
        let e = parse_move(&f).unwrap_err();
        assert_eq!(e.code, codes::INVALID_ACTION);
        assert!(e.message.contains("at most 1048576 bytes"), "{}", e.message);
        let f = Fields::from_value(Op::Step, json!({"action": {"message": "hi"}})).unwrap();
        assert!(parse_move(&f).is_ok());
    }

    #[test]
    fn ops_round_trip_by_name() {
        for op in Op::ALL {
            assert_eq!(Op::parse(op.name()), Some(op));
        }
        assert_eq!(Op::parse("launch"), None);
    }
}
