//! What compiling a criterion is given: the world and task it must fit, the
//! file's text (for lines), a probe that runs validation queries, and the
//! list its problems go to. Also the tool look-up every kind and the
//! rubric's `forbidden` and `gold` entries share.

use std::sync::Arc;

use serde_json::Value;

use crate::episode::Episode;
use crate::world::{Task, World, VIEW_TOOL_PREFIX};

/// Problems of one criterion: the line (`None`: the criterion's own line)
/// and what is wrong.
pub(crate) type Problems = Vec<(Option<usize>, String)>;

/// One criterion's compile inputs and its problem list.
pub(crate) struct CompileCx<'a, 'w> {
    pub world: &'a World,
    pub task: &'a Task,
    /// The rubric file's text, to turn spans into lines.
    pub text: &'a str,
    pub probe: &'a mut Probe<'w>,
    pub problems: &'a mut Problems,
}

impl CompileCx<'_, '_> {
    /// The 1-based line of a spanned value of the file.
    pub fn line<T>(&self, spanned: &toml::Spanned<T>) -> usize {
        line_of(self.text, spanned.span().start)
    }

    pub fn problem(&mut self, line: Option<usize>, message: impl Into<String>) {
        self.problems.push((line, message.into()));
    }
}

/// Whether the criterion states what must hold (a gate, or positive
/// points) rather than what must not happen.
pub(crate) fn must_hold(c: &crate::rubric::format::CriterionToml) -> bool {
    c.gate
        || c.points
            .as_ref()
            .and_then(crate::rubric::matchers::as_f64)
            .is_some_and(|p| p > 0.0)
}

pub(crate) use crate::diagnostics::line_of;

/// Runs validation queries; created on first use and shared by every file
/// of one load, since creating an episode copies the world's database.
pub(crate) struct Probe<'w> {
    world: &'w Arc<World>,
    episode: Option<Episode>,
}

impl<'w> Probe<'w> {
    pub fn new(world: &'w Arc<World>) -> Self {
        Probe {
            world,
            episode: None,
        }
    }

    /// The world's scope index (built once per world, shared after).
    pub fn scope_index(
        &mut self,
        scope: &crate::world::scope::Scope,
    ) -> crate::error::Result<Arc<crate::rubric::scope_index::ScopeIndex>> {
        crate::rubric::scope_index::ScopeIndex::of(self.world, scope)
    }

    /// Runs `sql` on the seeded world; the error says why it cannot be a
    /// rubric query.
    pub fn run(&mut self, sql: &str) -> Result<(), String> {
        if self.episode.is_none() {
            self.episode = Some(Episode::new(Arc::clone(self.world)).map_err(|e| e.to_string())?);
        }
        let ep = self.episode.as_ref().ok_or("no episode")?;
        ep.query(sql, &serde_json::Map::new())
            .map(|_| ())
            .map_err(|e| {
                let text = match &e {
                    crate::error::Error::Sqlite(s) => crate::sql::sql_message(s),
                    other => other.to_string(),
                };
                if text.contains("not authorized") || text.contains("must only read") {
                    "not allowed: a rubric query may only read (SELECT), never change the world"
                        .to_string()
                } else {
                    text
                }
            })
    }
}

/// The declared parameters of a tool or view tool; `None` if no such tool.
fn tool_parameters(world: &World, name: &str) -> Option<Value> {
    if let Some(t) = world.tools.get(name) {
        return Some(t.parameters.clone());
    }
    name.strip_prefix(VIEW_TOOL_PREFIX)
        .and_then(|v| world.views.get(v))
        .map(|v| v.tool_spec().parameters)
}

/// The parameters of tool `name`, or why the task cannot call it.
pub(crate) fn check_tool(world: &World, task: &Task, name: &str) -> Result<Value, String> {
    let Some(params) = tool_parameters(world, name) else {
        let mut known: Vec<String> = world.tools.keys().cloned().collect();
        known.extend(world.views.values().map(|v| v.tool_name()));
        return Err(format!(
            "there is no tool `{name}` in world `{}` (tools: {})",
            world.meta.id,
            known.join(", ")
        ));
    };
    if let Some(allowed) = &task.tools {
        if !name.starts_with(VIEW_TOOL_PREFIX) && !allowed.iter().any(|t| t == name) {
            return Err(format!(
                "tool `{name}` is not available in task `{}` (it allows: {})",
                task.id,
                allowed.join(", ")
            ));
        }
    }
    Ok(params)
}

/// Why `args` do not fit tool `name`'s declared parameters (empty when they
/// do, or when it is a view tool).
pub(crate) fn schema_errors(
    world: &World,
    name: &str,
    args: &serde_json::Map<String, Value>,
) -> Vec<String> {
    let Some(t) = world.tools.get(name) else {
        return Vec::new();
    };
    t.validator
        .iter_errors(&Value::Object(args.clone()))
        .map(|e| crate::world::describe_schema_error(&e))
        .collect()
}
