//! `GET /openapi.json`: the HTTP API described as OpenAPI 3.1, built from
//! the same tables the server runs on, so it cannot drift from them: the
//! routes from [`super::ROUTES`], each op's fields from [`Op::fields`]
//! (the list that refuses unknown fields), and the bodies from the JSON
//! Schemas `schema` serves. A test validates real responses against it.

use serde_json::{json, Map, Value};

use super::{Route, Verb, ROUTES};
use crate::protocol::{self, Op};

/// The agent API's version, as OpenAPI's `info.version`. OpenEnv's
/// validator reads a `1.` version as its `openenv-http/1.x` profile,
/// which this API implements (HTTP routes and `/ws` sessions).
pub const API_VERSION: &str = "1.0.0";

/// The whole document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for route in ROUTES {
        let item = paths
            .entry(route.path.to_string())
            .or_insert_with(|| json!({}));
        item[route.verb.openapi()] = operation(route);
    }
    paths.insert("/ws".into(), ws_path());
    paths.insert(
        "/openapi.json".into(),
        json!({"get": {
            "operationId": "openapi",
            "summary": "This document.",
            "responses": {"200": {"description": "The OpenAPI document.", "content": {"application/json": {"schema": {"type": "object"}}}}}
        }}),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Understudy agent API",
            "version": API_VERSION,
            "description": "Worlds served to agents Gym-style; every episode is recorded as a trajectory. See docs/agent-api.md.",
            "x-understudy-version": env!("CARGO_PKG_VERSION"),
        },
        "paths": Value::Object(paths),
        "components": {
            "schemas": {
                "StepResponse": step_response_schema(),
                "Error": error_schema(),
            },
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "Only when the server was started with a token."}
            }
        },
    })
}

fn operation(route: &Route) -> Value {
    let mut op = json!({
        "operationId": route.op.name(),
        "summary": route.summary,
        "responses": {
            "200": {"description": "Success.", "content": {"application/json": {"schema": response_schema(route.op)}}},
            "default": {"description": "A refused request (docs/agent-api.md lists the codes).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
        },
    });
    let fields = route.op.fields();
    match route.verb {
        Verb::Post => {
            let properties: Map<String, Value> = fields
                .iter()
                .map(|f| (f.name.to_string(), f.schema()))
                .collect();
            let required: Vec<&str> = fields
                .iter()
                .filter(|f| f.required)
                .map(|f| f.name)
                .collect();
            op["requestBody"] = json!({
                "required": !required.is_empty(),
                "content": {"application/json": {"schema": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                }}},
            });
        }
        Verb::Get => {
            let params: Vec<Value> = fields
                .iter()
                .map(|f| {
                    json!({
                        "name": f.name,
                        "in": "query",
                        "required": f.required,
                        "description": f.doc,
                        "schema": {"type": "string"},
                    })
                })
                .collect();
            if !params.is_empty() {
                op["parameters"] = Value::Array(params);
            }
        }
    }
    op
}

fn response_schema(op: Op) -> Value {
    match op {
        Op::Reset | Op::Step => json!({"$ref": "#/components/schemas/StepResponse"}),
        Op::State => without_meta(protocol::state_schema()),
        Op::Close => json!({
            "type": "object",
            "required": ["episode_id", "record_id", "status", "steps"],
            "properties": {
                "episode_id": {"type": "string"},
                "record_id": {"type": "string"},
                "status": {"enum": ["in_progress", "submitted", "abandoned"]},
                "steps": {"type": "integer", "minimum": 0},
            },
        }),
        Op::Schema => json!({
            "type": "object",
            "required": ["action", "observation", "state"],
            "properties": {
                "action": {"type": "object"},
                "observation": {"type": "object"},
                "state": {"type": "object"},
                "tools": {"type": "array", "items": {"type": "object"}},
                "tools_by_world": {"type": "object", "additionalProperties": {"type": "array"}},
            },
        }),
        Op::Tasks => json!({
            "type": "object",
            "required": ["worlds", "tasks"],
            "properties": {"worlds": {"type": "array"}, "tasks": {"type": "array"}},
        }),
        Op::Health => json!({
            "type": "object",
            "required": ["status", "version"],
            "properties": {"status": {"const": "healthy"}, "version": {"type": "string"}},
        }),
        Op::Metadata => json!({
            "type": "object",
            "required": ["name", "description"],
            "properties": {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "version": {"type": "string"},
            },
        }),
    }
}

/// What `reset` and `step` return ([`protocol::StepResponse`]).
fn step_response_schema() -> Value {
    json!({
        "type": "object",
        "required": ["episode_id", "record_id", "observation", "reward", "done", "terminated", "truncated", "info"],
        "properties": {
            "episode_id": {"type": "string"},
            "record_id": {"type": "string"},
            "observation": without_meta(protocol::observation_schema()),
            "reward": {"type": "number"},
            "done": {"type": "boolean"},
            "terminated": {"type": "boolean"},
            "truncated": {"type": "boolean"},
            "info": {"type": "object"},
        },
        "additionalProperties": false,
    })
}

fn error_schema() -> Value {
    json!({
        "type": "object",
        "required": ["error"],
        "properties": {"error": {
            "type": "object",
            "required": ["code", "message", "status"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "status": {"type": "integer"},
            },
        }},
    })
}

/// `/ws` as a GET that upgrades: OpenAPI has no words for the messages,
/// so they are named in the description.
fn ws_path() -> Value {
    json!({"get": {
        "operationId": "ws",
        "summary": "OpenEnv WebSocket session: send {\"type\": \"reset\"|\"step\"|\"state\"|\"close\", \"data\": {...}}; answers are {\"type\": \"observation\"|\"state\"|\"error\", \"data\": {...}}. One connection is one session; each episode is recorded.",
        "responses": {
            "101": {"description": "Switching to the WebSocket protocol."},
            "default": {"description": "A refused request.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
        },
    }})
}

/// A served schema without its `$schema` key, to sit inside the document.
fn without_meta(mut schema: Value) -> Value {
    if let Some(o) = schema.as_object_mut() {
        o.remove("$schema");
    }
    schema
}
