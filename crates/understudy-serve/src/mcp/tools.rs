//! One task's MCP tools, and what a call of each becomes.
//!
//! The tools are the task's own ([`World::task_tool_specs`]: the world's
//! declared tools the task allows, and every view's `view_…` read tool),
//! with their names, descriptions and JSON Schemas as the world declares
//! them; then `send_message` (the one way to talk to the customer) and
//! `submit` (the same pseudo-tool `schema` lists). A world tool of the same
//! name wins over either, as it does for `submit` over HTTP.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use understudy::world::{Task, ToolKind, World};

use crate::protocol::{self, kind_of};

/// The name of the tool that sends a message to the customer.
pub const MESSAGE_TOOL: &str = "send_message";

/// What a tool name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A tool or view the world declares.
    World,
    Message,
    Submit,
}

/// The tools of one task, in the order `tools/list` gives them.
#[derive(Debug, Clone)]
pub struct TaskTools {
    list: Vec<Tool>,
    kinds: HashMap<String, Kind>,
}

impl TaskTools {
    pub fn new(world: &World, task: &Task) -> TaskTools {
        let mut list = Vec::new();
        let mut kinds = HashMap::new();
        for spec in world.task_tool_specs(task) {
            let read = spec.kind == ToolKind::Read;
            let description = if spec.ends_episode {
                format!("{} (A successful call ends the episode.)", spec.description)
            } else {
                spec.description.clone()
            };
            let tool = Tool::new(
                spec.name.clone(),
                description,
                input_schema(&spec.parameters),
            )
            .with_title(spec.title.clone())
            .with_annotations(
                ToolAnnotations::with_title(spec.title.clone())
                    .read_only(read)
                    // A simulated company: nothing outside the world changes.
                    .open_world(false),
            );
            kinds.insert(spec.name.clone(), Kind::World);
            list.push(tool);
        }
        let user = &world.meta.user;
        if kinds.contains_key(MESSAGE_TOOL) {
            tracing::warn!(world = %world.meta.id, "the world declares a `{MESSAGE_TOOL}` tool; MCP clients get it instead of the message to the {user}");
        } else {
            let schema = json!({
                "type": "object",
                "properties": {"message": {"type": "string", "description": format!("What you say to the {user}.")}},
                "required": ["message"],
                "additionalProperties": false
            });
            list.push(
                Tool::new(
                    MESSAGE_TOOL,
                    format!("Send a message to the {user} and read their reply."),
                    input_schema(&schema),
                )
                .with_title(format!("Message the {user}"))
                .with_annotations(ToolAnnotations::new().read_only(false).open_world(false)),
            );
            kinds.insert(MESSAGE_TOOL.to_string(), Kind::Message);
        }
        if !kinds.contains_key(protocol::SUBMIT_TOOL) {
            let spec = protocol::submit_function(user);
            let function = &spec["function"];
            list.push(
                Tool::new(
                    protocol::SUBMIT_TOOL,
                    function["description"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    input_schema(&function["parameters"]),
                )
                .with_title("Submit")
                .with_annotations(ToolAnnotations::new().read_only(false).open_world(false)),
            );
            kinds.insert(protocol::SUBMIT_TOOL.to_string(), Kind::Submit);
        }
        TaskTools { list, kinds }
    }

    pub fn list(&self) -> &[Tool] {
        &self.list
    }

    pub fn names(&self) -> String {
        self.list
            .iter()
            .map(|t| format!("`{}`", t.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn contains(&self, name: &str) -> bool {
        self.kinds.contains_key(name)
    }

    /// The `action` of the `step` a call of `name` with `args` runs, or
    /// why the arguments cannot make one (a message naming the argument).
    /// World tools' arguments are checked by the world, as over HTTP: a
    /// mismatch is an `invalid_arguments` observation, recorded as a step.
    pub fn action(&self, name: &str, args: Map<String, Value>) -> Result<Value, String> {
        match self.kinds.get(name) {
            None => Err(format!(
                "no tool `{name}`; this task's tools are {}",
                self.names()
            )),
            Some(Kind::World) => Ok(json!({"tool": name, "args": args})),
            Some(Kind::Submit) => Ok(json!({ "submit": Value::Object(args) })),
            Some(Kind::Message) => {
                if let Some(k) = args.keys().find(|k| *k != "message") {
                    return Err(format!(
                        "`{MESSAGE_TOOL}` takes only the argument `message`, not `{k}`"
                    ));
                }
                match args.get("message") {
                    Some(Value::String(m)) => Ok(json!({ "message": m })),
                    None => Err(format!(
                        "`{MESSAGE_TOOL}` needs the argument `message` (text)"
                    )),
                    Some(other) => Err(format!(
                        "the argument `message` of `{MESSAGE_TOOL}` must be text, not {}",
                        kind_of(other)
                    )),
                }
            }
        }
    }
}

/// A JSON Schema as MCP's `inputSchema`, which must be an object schema.
fn input_schema(schema: &Value) -> Arc<JsonObject> {
    match schema {
        Value::Object(o) => Arc::new(o.clone()),
        _ => {
            let mut o = JsonObject::new();
            o.insert("type".into(), json!("object"));
            Arc::new(o)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> TaskTools {
        let world = understudy_testkit::world("support-desk");
        let task = world.task("duplicate-charge").expect("the task").clone();
        TaskTools::new(&world, &task)
    }

    #[test]
    fn the_task_tools_then_the_message_and_submit() {
        let t = tools();
        let names: Vec<&str> = t.list().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names[names.len() - 2..],
            [MESSAGE_TOOL, protocol::SUBMIT_TOOL]
        );
        assert!(names.iter().any(|n| n.starts_with("view_")), "{names:?}");
        for tool in t.list() {
            assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()));
            assert!(t.contains(&tool.name));
        }
    }

    #[test]
    fn calls_become_actions_and_bad_arguments_name_the_argument() {
        let t = tools();
        assert_eq!(
            t.action(
                MESSAGE_TOOL,
                json!({"message": "hi"}).as_object().cloned().unwrap()
            ),
            Ok(json!({"message": "hi"}))
        );
        assert_eq!(
            t.action(protocol::SUBMIT_TOOL, Map::new()),
            Ok(json!({"submit": {}}))
        );
        let e = t
            .action(
                MESSAGE_TOOL,
                json!({"message": 3}).as_object().cloned().unwrap(),
            )
            .unwrap_err();
        assert!(e.contains("`message`") && e.contains("a number"), "{e}");
        let e = t
            .action(
                MESSAGE_TOOL,
                json!({"text": "hi"}).as_object().cloned().unwrap(),
            )
            .unwrap_err();
        assert!(e.contains("`text`"), "{e}");
        assert!(t
            .action(MESSAGE_TOOL, Map::new())
            .unwrap_err()
            .contains("needs"));
        let e = t.action("launch", Map::new()).unwrap_err();
        assert!(e.contains("`launch`") && e.contains("`submit`"), "{e}");
    }
}
