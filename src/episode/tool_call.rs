//! Running one declared tool: validate, guard, body, script, result, all in
//! one savepoint so that a failed call leaves the world exactly as it was.

use serde_json::{Map, Value};

use super::json_columns;
use super::{argument_problems, Episode};
use crate::observation::{Observation, ObservationErrorCode};
use crate::python;
use crate::script::{self, ScriptError, ScriptOutput};
use crate::sql::budget::is_exhausted;
use crate::sql::is_bound;
use crate::sql::sandbox::SandboxMode;
use crate::sql::values::{bind_named, collect_rows, from_json, truthy};
use crate::template;
use crate::world::{
    describe_schema_error, sql_message, ResultShape, Tool, ToolKind, ALL_ARGUMENTS,
};
use rusqlite::types::Value as SqlValue;

pub(super) fn run(ep: &mut Episode, tool: &Tool, args: &Map<String, Value>) -> Observation {
    let instance = Value::Object(args.clone());
    let mut described: Vec<String> = Vec::new();
    let mut problems = Vec::new();
    // Checking is cheaper than collecting errors: collect only on failure.
    if !tool.validator.is_valid(&instance) {
        for e in tool.validator.iter_errors(&instance) {
            described.push(describe_schema_error(&e));
            problems.extend(argument_problems::problems(&e));
        }
    }
    if !described.is_empty() {
        return Observation::invalid_arguments(
            format!(
                "invalid arguments for {}: {}",
                tool.name,
                described.join("; ")
            ),
            problems,
        );
    }
    let mode = match tool.kind {
        ToolKind::Read => SandboxMode::WorldRead,
        ToolKind::Write => SandboxMode::WorldWrite,
    };
    // Read tools cannot change anything (the sandbox denies it), so they
    // need no savepoint; write tools get one so a failure undoes it all.
    let guarded = tool.kind == ToolKind::Write;
    if guarded {
        if let Err(e) = engine_statement(ep, "SAVEPOINT tool_call") {
            return Observation::failure(ObservationErrorCode::ToolFailed, sql_message(&e));
        }
    }
    let sandbox = ep.sandbox.clone();
    sandbox.set(mode);
    let outcome = execute(ep, tool, args, mode);
    sandbox.set(SandboxMode::Engine);
    if !guarded {
        return outcome;
    }
    let ended = if outcome.ok {
        engine_statement(ep, "RELEASE tool_call")
    } else if ep.conn().is_autocommit() {
        // SQLite rolls the whole transaction back itself after some errors
        // (out of memory, a full disk); the savepoint was the outermost
        // one, so what it undid is exactly this call.
        Ok(())
    } else {
        engine_statement(ep, "ROLLBACK TO tool_call")
            .and_then(|_| engine_statement(ep, "RELEASE tool_call"))
    };
    match ended {
        Ok(()) => outcome,
        Err(e) => Observation::failure(ObservationErrorCode::ToolFailed, sql_message(&e)),
    }
}

/// `[arguments]`: a call naming a reserved argument, or one `parameters`
/// does not declare (the first in code-point order), is refused before any
/// guard, as a failed guard would refuse it.
fn refuse_arguments(
    world: &crate::world::World,
    tool: &Tool,
    args: &Map<String, Value>,
) -> Option<Observation> {
    let rules = &tool.arguments;
    let (template, context) = if let Some((_, t)) = rules
        .reserved
        .iter()
        .find(|(name, _)| args.contains_key(name))
    {
        (t, Value::Object(args.clone()))
    } else {
        let (t, declared) = rules.unexpected.as_ref()?;
        let name = args.keys().filter(|k| !declared.contains(*k)).min()?;
        let mut context = args.clone();
        context.insert("name".into(), Value::String(name.clone()));
        (t, Value::Object(context))
    };
    Some(match render(&world.templates, tool, template, &context) {
        Ok(message) => Observation::failure(ObservationErrorCode::GuardFailed, message),
        Err(m) => Observation::failure(ObservationErrorCode::ToolFailed, m),
    })
}

/// Runs one of the engine's own statements, cached. World SQL can never
/// share these cache entries: savepoint statements are refused by the text
/// check before any world statement is prepared.
fn engine_statement(ep: &Episode, sql: &str) -> rusqlite::Result<()> {
    ep.conn().prepare_cached(sql)?.execute([])?;
    Ok(())
}

fn execute(
    ep: &mut Episode,
    tool: &Tool,
    args: &Map<String, Value>,
    mode: SandboxMode,
) -> Observation {
    let world = std::sync::Arc::clone(&ep.world);
    let lookup = |name: &str| {
        if name == ALL_ARGUMENTS {
            Some(SqlValue::Text(
                serde_json::to_string(args).unwrap_or_else(|_| "{}".into()),
            ))
        } else {
            args.get(name).map(from_json)
        }
    };

    if let Some(refused) = refuse_arguments(&world, tool, args) {
        return refused;
    }

    for guard in &tool.guards {
        let checked = (|| -> rusqlite::Result<(bool, Map<String, Value>)> {
            let mut stmt = ep.conn().prepare_cached(&guard.check)?;
            bind_named(&mut stmt, lookup)?;
            let rows = collect_rows(&mut stmt)?;
            let passed = rows
                .first()
                .and_then(|r| r.values().next())
                .is_some_and(truthy);
            Ok((passed, rows.into_iter().next().unwrap_or_default()))
        })();
        match checked {
            Ok((true, _)) => {}
            Ok((false, row)) => {
                let mut context = args.clone();
                context.extend(row);
                let message = match render(
                    &world.templates,
                    tool,
                    &guard.error_template,
                    &Value::Object(context),
                ) {
                    Ok(m) => m,
                    Err(m) => return Observation::failure(ObservationErrorCode::ToolFailed, m),
                };
                return Observation::failure(ObservationErrorCode::GuardFailed, message);
            }
            Err(e) => return sql_failure(tool, &e),
        }
    }

    for stmt_sql in &tool.body {
        let done = ep.conn().prepare_cached(stmt_sql).and_then(|mut stmt| {
            bind_named(&mut stmt, lookup)?;
            stmt.raw_execute()
        });
        if let Err(e) = done {
            return sql_failure(tool, &e);
        }
    }

    let mut result = Value::Null;
    let mut verbatim: Option<String> = None;
    if let Some(ast) = &tool.script {
        let conn = ep.conn.take().expect("connection present outside scripts");
        let (conn, outcome) = script::run(
            &world.scripts,
            ast,
            conn,
            mode == SandboxMode::WorldRead,
            &Value::Object(args.clone()),
        );
        ep.conn = Some(conn);
        match outcome {
            Ok(ScriptOutput::Text(t)) => {
                result = Value::String(t.clone());
                verbatim = Some(t);
            }
            Ok(ScriptOutput::Json(v)) => result = v,
            Err(ScriptError::Rejected(m)) => {
                return Observation::failure(ObservationErrorCode::GuardFailed, m)
            }
            Err(ScriptError::Sql(m)) => {
                return Observation::failure(ObservationErrorCode::ToolFailed, m)
            }
            Err(ScriptError::Failed(m)) => {
                return Observation::failure(ObservationErrorCode::ScriptFailed, m)
            }
        }
    }

    if let Some(spec) = &tool.result {
        let mut rows_result = false;
        if let Some(query) = &spec.query {
            let rows = ep.conn().prepare_cached(query).and_then(|mut stmt| {
                bind_named(&mut stmt, lookup)?;
                collect_rows(&mut stmt)
            });
            let mut rows = match rows {
                Ok(r) => r,
                Err(e) => return sql_failure(tool, &e),
            };
            if let Err(m) = json_columns::decode(&mut rows, &spec.json_columns) {
                return Observation::failure(ObservationErrorCode::ToolFailed, m);
            }
            rows_result = spec.shape == ResultShape::Rows;
            result = shape(rows, spec.shape);
        }
        if let Some(template) = &spec.text_template {
            let context = ResultContext {
                args,
                rows: rows_result.then_some(&result),
                result: &result,
            };
            return match render(&world.templates, tool, template, &context) {
                Ok(text) => Observation::success(result, text),
                Err(m) => Observation::failure(ObservationErrorCode::ToolFailed, m),
            };
        }
    }
    let text = match verbatim {
        Some(t) => t,
        None => match &result {
            Value::String(s) => s.clone(),
            Value::Null => "Done.".to_string(),
            other => python::json::dumps(other),
        },
    };
    Observation::success(result, text)
}

fn shape(rows: Vec<Map<String, Value>>, shape: ResultShape) -> Value {
    match shape {
        ResultShape::Rows => Value::Array(rows.into_iter().map(Value::Object).collect()),
        ResultShape::Row => rows
            .into_iter()
            .next()
            .map(Value::Object)
            .unwrap_or(Value::Null),
        ResultShape::Value => rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().map(|(_, v)| v))
            .unwrap_or(Value::Null),
    }
}

/// What a result template sees: the call's arguments, then `rows` (a
/// rows result), then `result`, then a row result's fields, each name
/// shadowing the same name before it. Serialized from borrows, so the
/// result is not copied into a context first.
struct ResultContext<'a> {
    args: &'a Map<String, Value>,
    rows: Option<&'a Value>,
    result: &'a Value,
}

impl serde::Serialize for ResultContext<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let fields = self.result.as_object();
        let shadowed = |name: &str| fields.is_some_and(|f| f.contains_key(name));
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.args {
            let later = k == "result" || (k == "rows" && self.rows.is_some());
            if !later && !shadowed(k) {
                map.serialize_entry(k, v)?;
            }
        }
        if let Some(rows) = self.rows.filter(|_| !shadowed("rows")) {
            map.serialize_entry("rows", rows)?;
        }
        if !shadowed("result") {
            map.serialize_entry("result", self.result)?;
        }
        for (k, v) in fields.into_iter().flatten() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A template's text; a template that broke a bound (fuel, size) fails the
/// call (the `Err` is its message, naming the tool and template), while an
/// ordinary template error is shown in place of the message.
fn render(
    env: &minijinja::Environment<'static>,
    tool: &Tool,
    name: &str,
    context: &impl serde::Serialize,
) -> Result<String, String> {
    match template::render(env, name, context) {
        Ok(text) => Ok(text),
        Err(template::RenderError::Failed(e)) => {
            Ok(format!("(the message could not be shown: {e})"))
        }
        Err(bound) => Err(bound.describe(&tool.name, name)),
    }
}

fn sql_failure(tool: &Tool, e: &rusqlite::Error) -> Observation {
    let message = if is_exhausted(e) {
        format!("the tool `{}` took too long: {}", tool.name, sql_message(e))
    } else if is_bound(e) {
        format!("the tool `{}` was stopped: {}", tool.name, sql_message(e))
    } else {
        sql_message(e)
    };
    Observation::failure(ObservationErrorCode::ToolFailed, message)
}
