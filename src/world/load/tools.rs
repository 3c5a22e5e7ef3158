//! Compiling `tools/*.toml`: each tool's parameters schema, guards, body
//! statements, script and result, every piece checked against the seeded
//! database under the sandbox mode it will run in.

use std::collections::BTreeSet;

use indexmap::IndexMap;
use toml::Spanned;

use super::context::LoadContext;
use super::files;
use super::names::{humanize, is_identifier};
use super::template_names::{unknown_names, TemplateContext};
use crate::diagnostics::line_of;
use crate::script;
use crate::sql::sandbox::SandboxMode;
use crate::world::manifest::{
    ArgumentsToml, GuardToml, ResultShape, ResultToml, ToolKind, ToolToml,
};
use crate::world::{ArgumentRules, Guard, Tool, ToolResult, ALL_ARGUMENTS, VIEW_TOOL_PREFIX};

/// The tools of `tools/`: those that compiled, and the names of those
/// whose files had problems.
pub(super) struct LoadedTools {
    /// Every sound tool, by name.
    pub tools: IndexMap<String, Tool>,
    /// The names (as declared, and as the file is named) of tools left out
    /// for problems already reported, so that what uses them is not
    /// reported again as naming an unknown tool.
    pub broken: BTreeSet<String>,
}

/// Every tool in `tools/`; a world needs at least one.
pub(super) fn load_tools(cx: &mut LoadContext<'_>) -> LoadedTools {
    let mut tools = IndexMap::new();
    let mut broken = BTreeSet::new();
    let files = files::list_files(cx.root, "tools", ".toml", &mut cx.diags);
    if files.is_empty() {
        cx.diags.push(
            "tools",
            None,
            None,
            "a world needs at least one tool in tools/*.toml",
        );
    }
    for rel in files {
        let stem = rel.trim_start_matches("tools/").trim_end_matches(".toml");
        let Some(text) = files::read_text(cx.root, &rel, &mut cx.diags) else {
            broken.insert(stem.to_string());
            continue;
        };
        cx.hashed.add(&rel);
        let Some(spec) = files::parse_toml::<ToolToml>(&rel, &text, &mut cx.diags) else {
            broken.insert(stem.to_string());
            continue;
        };
        let declared = spec.name.clone();
        match compile_tool(cx, &rel, &text, spec) {
            Some(tool) if tools.contains_key(&tool.name) => cx.diags.push(
                &rel,
                None,
                Some(format!("tool {}", tool.name)),
                "another tool has the same name",
            ),
            Some(tool) => {
                tools.insert(tool.name.clone(), tool);
            }
            None => {
                broken.insert(stem.to_string());
                broken.insert(declared);
            }
        }
    }
    LoadedTools { tools, broken }
}

/// One tool, or `None` when any of its pieces has a problem (all reported).
fn compile_tool(cx: &mut LoadContext<'_>, rel: &str, text: &str, spec: ToolToml) -> Option<Tool> {
    let before = cx.diags.len();
    let mut compiler = ToolCompiler {
        cx,
        rel,
        text,
        name: &spec.name,
        declared: BTreeSet::new(),
    };
    compiler.check_identity(&spec);
    let (parameters, validator) = compiler.parameters(spec.parameters.as_ref());
    let arguments = compiler.arguments(spec.arguments.as_ref());
    let guards = compiler.guards(&spec.guards);
    compiler.body(spec.kind, &spec.body);
    let script = compiler.script(spec.script.as_ref());
    let result = compiler.result(spec.result.as_ref(), spec.script.is_some());

    if cx.diags.len() > before {
        return None;
    }
    Some(Tool {
        title: spec.title.clone().unwrap_or_else(|| humanize(&spec.name)),
        name: spec.name,
        description: spec.description,
        kind: spec.kind,
        ends_episode: spec.ends_episode,
        parameters,
        validator: validator?,
        arguments,
        guards,
        body: spec.body.into_iter().map(Spanned::into_inner).collect(),
        script,
        result,
    })
}

/// The steps of compiling one tool file, each reporting its problems against
/// the file and the tool.
struct ToolCompiler<'c, 'a> {
    cx: &'c mut LoadContext<'a>,
    /// The tool file, relative to the world folder.
    rel: &'c str,
    /// The file's text, to turn spans into lines.
    text: &'c str,
    /// The tool's name as declared.
    name: &'c str,
    /// The parameter names `parameters.properties` declares, once compiled:
    /// every `:name` the tool's SQL uses must be one of them.
    declared: BTreeSet<String>,
}

impl ToolCompiler<'_, '_> {
    /// `tool <name>` followed by which piece of it (`, guard 2`).
    fn subject(&self, piece: &str) -> Option<String> {
        Some(format!("tool {}{piece}", self.name))
    }

    fn line(&self, offset: usize) -> usize {
        line_of(self.text, offset)
    }

    fn report(&mut self, line: Option<usize>, piece: &str, message: impl Into<String>) {
        let subject = self.subject(piece);
        self.cx.diags.push(self.rel, line, subject, message);
    }

    /// The name (and file name) and description.
    fn check_identity(&mut self, spec: &ToolToml) {
        let stem = self
            .rel
            .trim_start_matches("tools/")
            .trim_end_matches(".toml");
        if !is_identifier(&spec.name) {
            self.report(
                None,
                "",
                "tool names must be lowercase letters, digits and underscores, starting with a letter",
            );
        } else if spec.name != stem {
            self.report(
                None,
                "",
                format!(
                    "the file must be named after the tool: expected tools/{}.toml",
                    spec.name
                ),
            );
        }
        if spec.name.starts_with(VIEW_TOOL_PREFIX) {
            self.report(
                None,
                "",
                format!(
                    "names starting with `{VIEW_TOOL_PREFIX}` are reserved for views' read tools"
                ),
            );
        }
        if spec.description.trim().is_empty() {
            self.report(
                None,
                "",
                "description must not be empty: agents and experts read it to choose the tool",
            );
        }
    }

    /// The parameters as a JSON Schema object and its validator (`None`
    /// when the schema is not valid); records the declared names.
    fn parameters(
        &mut self,
        written: Option<&toml::Value>,
    ) -> (serde_json::Value, Option<jsonschema::Validator>) {
        let parameters: serde_json::Value = match written {
            None => {
                serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
            }
            Some(p) => match serde_json::to_value(p) {
                Ok(v) => v,
                Err(e) => {
                    self.report(
                        None,
                        ", parameters",
                        format!("not representable as JSON: {e}"),
                    );
                    serde_json::Value::Null
                }
            },
        };
        if parameters.get("type").and_then(|t| t.as_str()) != Some("object") {
            self.report(
                None,
                ", parameters",
                "parameters must be a JSON Schema with type = \"object\"",
            );
        }
        for keyword in ["anyOf", "oneOf", "allOf", "not", "enum"] {
            if parameters.get(keyword).is_some() {
                self.report(None, ", parameters", format!("top-level `{keyword}` is not allowed (function-calling APIs reject it); use a guard to require one of several arguments"));
            }
        }
        self.declared = parameters
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        if self.declared.contains(ALL_ARGUMENTS) {
            self.report(
                None,
                &format!(", parameter {ALL_ARGUMENTS}"),
                format!("`{ALL_ARGUMENTS}` is reserved: in the tool's SQL, :{ALL_ARGUMENTS} is every argument as one JSON object; name the parameter otherwise"),
            );
        }
        if let Some(required) = parameters.get("required").and_then(|r| r.as_array()) {
            for name in required.iter().filter_map(|r| r.as_str()) {
                if !self.declared.contains(name) {
                    self.report(
                        None,
                        &format!(", parameter {name}"),
                        "listed in `required` but not declared in `properties`",
                    );
                }
            }
        }
        let validator = match jsonschema::validator_for(&parameters) {
            Ok(v) => Some(v),
            Err(e) => {
                self.report(
                    None,
                    ", parameters",
                    format!("not a valid JSON Schema: {e}"),
                );
                None
            }
        };
        (parameters, validator)
    }

    /// Every `:name` in `used` must be a declared parameter.
    fn check_used(&mut self, used: &[String], line: usize, piece: &str) {
        for name in used {
            if name != ALL_ARGUMENTS && !self.declared.contains(name) {
                let message = format!(
                    "uses :{name}, which is not a declared parameter (declared: {})",
                    self.declared.iter().cloned().collect::<Vec<_>>().join(", ")
                );
                self.report(Some(line), piece, message);
            }
        }
    }

    /// Prepares `sql` under `mode` and checks its parameters; `failed`
    /// prefixes the message when it does not prepare. The columns it
    /// returns, when it prepared.
    fn check_sql(
        &mut self,
        mode: SandboxMode,
        sql: &str,
        line: usize,
        piece: &str,
        failed: &str,
    ) -> Option<Vec<String>> {
        match self.cx.prepare(mode, sql) {
            Ok(prepared) => {
                self.check_used(&prepared.parameters, line, piece);
                Some(prepared.columns)
            }
            Err(m) => {
                self.report(Some(line), piece, format!("{failed}: {m}"));
                None
            }
        }
    }

    /// Every name the template `name` uses must be in its context: a
    /// misspelt column would otherwise render empty on every call.
    fn check_template_names(
        &mut self,
        name: &str,
        line: usize,
        piece: &str,
        columns: &[String],
        extra: &[&str],
        result_fields: Option<&[String]>,
    ) {
        let context = TemplateContext {
            parameters: &self.declared,
            columns,
            extra,
            result_fields,
        };
        let mut names: BTreeSet<&str> = self.declared.iter().map(String::as_str).collect();
        names.extend(columns.iter().map(String::as_str));
        names.extend(extra);
        let names = names.into_iter().collect::<Vec<_>>().join(", ");
        let fields = result_fields.unwrap_or_default().join(", ");
        let unknown = unknown_names(&self.cx.templates, name, &context);
        for used in unknown {
            let message = if used.starts_with("result.") && result_fields.is_some() {
                format!("the template uses `{used}`, which the result does not have, so it would render empty (the result's columns: {fields})")
            } else {
                format!(
                    "the template uses `{used}`, which is neither a parameter nor a column it sees, so it would render empty (it can use: {names})"
                )
            };
            self.report(Some(line), piece, message);
        }
    }

    /// `[arguments]`: each refusal's template, checked against what it can
    /// name (the call's arguments; `name` too for an undeclared one).
    fn arguments(&mut self, written: Option<&ArgumentsToml>) -> ArgumentRules {
        let Some(written) = written else {
            return ArgumentRules::default();
        };
        let mut rules = ArgumentRules::default();
        for (arg, error) in &written.reserved {
            let line = self.line(error.span().start);
            let piece = format!(", arguments.reserved.{arg}");
            if self.declared.contains(arg) {
                self.report(
                    Some(line),
                    &piece,
                    format!("`{arg}` is declared in parameters, so a call may use it; a reserved argument is one it may not"),
                );
            }
            let name = format!("{}/arguments/reserved/{arg}", self.name);
            let subject = self.subject(&piece);
            self.cx
                .add_template(&name, error.get_ref(), self.rel, line, subject);
            self.check_template_names(&name, line, &format!("{piece}, error"), &[], &[], None);
            rules.reserved.push((arg.clone(), name));
        }
        if let Some(error) = &written.unexpected {
            let line = self.line(error.span().start);
            let piece = ", arguments.unexpected";
            let name = format!("{}/arguments/unexpected", self.name);
            let subject = self.subject(piece);
            self.cx
                .add_template(&name, error.get_ref(), self.rel, line, subject);
            self.check_template_names(&name, line, piece, &["name".to_string()], &[], None);
            rules.unexpected = Some((name, self.declared.clone()));
        }
        rules
    }

    /// Each guard's check (read-only SQL) and its error template.
    fn guards(&mut self, written: &[GuardToml]) -> Vec<Guard> {
        let mut guards = Vec::new();
        for (i, guard) in written.iter().enumerate() {
            let line = self.line(guard.check.span().start);
            let piece = format!(", guard {}", i + 1);
            let columns = self.check_sql(
                SandboxMode::WorldRead,
                guard.check.get_ref(),
                line,
                &piece,
                "check does not prepare",
            );
            let name = format!("{}/guard/{}", self.name, i + 1);
            let error_line = self.line(guard.error.span().start);
            let subject = self.subject(&piece);
            self.cx
                .add_template(&name, guard.error.get_ref(), self.rel, error_line, subject);
            if let Some(columns) = columns {
                let piece = format!("{piece}, error");
                self.check_template_names(&name, error_line, &piece, &columns, &[], None);
            }
            guards.push(Guard {
                check: guard.check.get_ref().clone(),
                error_template: name,
            });
        }
        guards
    }

    /// The body statements, under the tool kind's sandbox mode.
    fn body(&mut self, kind: ToolKind, statements: &[Spanned<String>]) {
        let mode = match kind {
            ToolKind::Read => SandboxMode::WorldRead,
            ToolKind::Write => SandboxMode::WorldWrite,
        };
        for (i, stmt) in statements.iter().enumerate() {
            let line = self.line(stmt.span().start);
            let piece = format!(", body statement {}", i + 1);
            self.check_sql(mode, stmt.get_ref(), line, &piece, "does not prepare");
        }
    }

    /// The script, which must be a file inside the world folder and compile.
    fn script(&mut self, written: Option<&Spanned<String>>) -> Option<rhai::AST> {
        let s = written?;
        let line = self.line(s.span().start);
        let root = self.cx.root;
        let path = root.join(s.get_ref());
        // The script's path inside the world folder, links resolved.
        let inside = path
            .canonicalize()
            .ok()
            .zip(root.canonicalize().ok())
            .and_then(|(p, r)| {
                p.strip_prefix(r)
                    .ok()
                    .map(|p| p.to_string_lossy().to_string())
            });
        let Some(inside) = inside else {
            self.report(
                Some(line),
                ", script",
                format!(
                    "script {:?} must be a file inside the world folder",
                    s.get_ref()
                ),
            );
            return None;
        };
        let source = match std::fs::read_to_string(&path) {
            Ok(t) => {
                self.cx.hashed.add(&inside);
                t
            }
            Err(e) => {
                self.report(
                    Some(line),
                    ", script",
                    format!("cannot read {:?}: {e}", s.get_ref()),
                );
                return None;
            }
        };
        match script::compile(&self.cx.scripts, &source) {
            Ok(ast) => Some(ast),
            Err((l, m)) => {
                let subject = self.subject(", script");
                self.cx.diags.push(
                    s.get_ref().as_str(),
                    l,
                    subject,
                    format!("script does not compile: {m}"),
                );
                None
            }
        }
    }

    /// The result query (read-only; not beside a script) and text template.
    fn result(&mut self, written: Option<&ResultToml>, has_script: bool) -> Option<ToolResult> {
        let r = written?;
        // The result's columns, when they can be known: `Some(empty)` for
        // a tool that returns nothing but `Done.`.
        let mut columns = (!has_script).then(Vec::new);
        if let Some(q) = &r.query {
            let line = self.line(q.span().start);
            if has_script {
                self.report(
                    Some(line),
                    ", result",
                    "a tool with a script returns the script's value; remove result.query",
                );
            }
            columns = self
                .check_sql(
                    SandboxMode::WorldRead,
                    q.get_ref(),
                    line,
                    ", result",
                    "query does not prepare",
                )
                .filter(|_| !has_script);
        }
        let text_template = r.text.as_ref().map(|t| {
            let name = format!("{}/text", self.name);
            let line = self.line(t.span().start);
            let subject = self.subject(", result.text");
            self.cx
                .add_template(&name, t.get_ref(), self.rel, line, subject);
            if let Some(columns) = &columns {
                let piece = ", result.text";
                match (r.query.is_some(), r.shape) {
                    (true, ResultShape::Row) => self.check_template_names(
                        &name,
                        line,
                        piece,
                        columns,
                        &["result"],
                        Some(columns),
                    ),
                    (true, ResultShape::Rows) => self.check_template_names(
                        &name,
                        line,
                        piece,
                        &[],
                        &["result", "rows"],
                        None,
                    ),
                    _ => self.check_template_names(&name, line, piece, &[], &["result"], None),
                }
            }
            name
        });
        let json_columns = self.json_columns(r, columns.as_deref());
        Some(ToolResult {
            query: r.query.as_ref().map(|q| q.get_ref().clone()),
            shape: r.shape,
            text_template,
            json_columns,
        })
    }

    /// `result.json_columns`: each must be a column `result.query` returns
    /// (`columns`, when it prepared).
    fn json_columns(&mut self, r: &ResultToml, columns: Option<&[String]>) -> Vec<String> {
        let Some(declared) = &r.json_columns else {
            return Vec::new();
        };
        let line = Some(self.line(declared.span().start));
        if r.query.is_none() {
            self.report(
                line,
                ", result.json_columns",
                "json_columns needs a result.query whose columns hold JSON (a script returns JSON values itself)",
            );
        } else if let Some(columns) = columns {
            for c in declared.get_ref() {
                if !columns.contains(c) {
                    self.report(
                        line,
                        ", result.json_columns",
                        format!(
                            "`{c}` is not a column of the result query (columns: {})",
                            columns.join(", ")
                        ),
                    );
                }
            }
        }
        declared.get_ref().clone()
    }
}

/// A JSON Schema violation in words: `amount: "ten" is not of type "number"`.
pub(crate) fn describe_schema_error(e: &jsonschema::ValidationError<'_>) -> String {
    let path = e.instance_path().to_string();
    let path = path.trim_start_matches('/').replace('/', ".");
    if path.is_empty() {
        e.to_string()
    } else {
        format!("{path}: {e}")
    }
}
