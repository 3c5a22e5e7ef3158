//! Compiling `views.toml`: named read-only queries shown as record tables,
//! each also offered to agents as a read tool unless it is for the expert
//! only.

use std::collections::HashSet;

use indexmap::IndexMap;
use toml::Spanned;

use super::context::LoadContext;
use super::files;
use super::names::{humanize, is_identifier};
use crate::diagnostics::line_of;
use crate::sql::sandbox::SandboxMode;
use crate::world::manifest::{ViewToml, ViewsToml};
use crate::world::{Audience, Tool, View};

/// Every view in `views.toml` (an optional file), by name. A view's read
/// tool must not clash with a declared tool.
pub(super) fn load_views(
    cx: &mut LoadContext<'_>,
    tools: &IndexMap<String, Tool>,
) -> IndexMap<String, View> {
    let mut views = IndexMap::new();
    let rel = "views.toml";
    let Some(text) = files::read_optional_text(cx.root, rel, &mut cx.diags) else {
        return views;
    };
    cx.hashed.add(rel);
    let Some(parsed) = files::parse_toml::<ViewsToml>(rel, &text, &mut cx.diags) else {
        return views;
    };
    for v in parsed.views {
        if let Some(view) = compile_view(cx, rel, &text, v) {
            if views.contains_key(&view.name) {
                cx.diags.push(
                    rel,
                    None,
                    Some(format!("view {}", view.name)),
                    "another view has the same name",
                );
            } else if tools.contains_key(&view.tool_name()) {
                cx.diags.push(
                    rel,
                    None,
                    Some(format!("view {}", view.name)),
                    format!(
                        "its read tool `{}` clashes with a declared tool",
                        view.tool_name()
                    ),
                );
            } else {
                views.insert(view.name.clone(), view);
            }
        }
    }
    views
}

/// One view, or `None` when it has a problem (all reported).
fn compile_view(cx: &mut LoadContext<'_>, rel: &str, text: &str, v: ViewToml) -> Option<View> {
    let before = cx.diags.len();
    let name = v.name.get_ref().clone();
    let line = line_of(text, v.name.span().start);
    let subject = Some(format!("view {name}"));
    if !is_identifier(&name) {
        cx.diags.push(
            rel,
            Some(line),
            subject.clone(),
            "view names must be lowercase letters, digits and underscores",
        );
    }
    let qline = line_of(text, v.query.span().start);
    let columns = match cx.prepare(SandboxMode::WorldRead, v.query.get_ref()) {
        Ok(prepared) => {
            if !prepared.parameters.is_empty() {
                cx.diags.push(
                    rel,
                    Some(qline),
                    subject.clone(),
                    "a view's query takes no parameters; filtering is done by the view tool",
                );
            }
            prepared.columns
        }
        Err(m) => {
            cx.diags.push(
                rel,
                Some(qline),
                subject.clone(),
                format!("query does not prepare: {m}"),
            );
            Vec::new()
        }
    };
    let unique: HashSet<&String> = columns.iter().collect();
    if unique.len() != columns.len() {
        cx.diags.push(
            rel,
            Some(qline),
            subject.clone(),
            "the query returns two columns with the same name; alias them",
        );
    }
    if let Some(key) = &v.key {
        if !columns.contains(key) && !columns.is_empty() {
            cx.diags.push(
                rel,
                Some(line),
                subject.clone(),
                format!(
                    "key `{key}` is not a column of the view (columns: {})",
                    columns.join(", ")
                ),
            );
        }
    }
    for c in &v.json_columns {
        if !columns.contains(c) && !columns.is_empty() {
            cx.diags.push(
                rel,
                Some(line),
                subject.clone(),
                format!(
                    "json_columns names `{c}`, which is not a column of the view (columns: {})",
                    columns.join(", ")
                ),
            );
        }
    }
    if let Some(record) = &v.record {
        let rline = line_of(text, record.span().start);
        check_record_query(cx, rel, rline, &subject, v.key.is_some(), record.get_ref());
    }
    let audience = match &v.audience {
        None => Audience::Everyone,
        Some(word) => Audience::parse(word.get_ref()).unwrap_or_else(|| {
            cx.diags.push(
                rel,
                Some(line_of(text, word.span().start)),
                subject.clone(),
                format!(
                    "audience `{}` is not one; expected `{}` (agents and experts, the default) or `{}` (the expert in the app only)",
                    word.get_ref(),
                    Audience::WORDS[0],
                    Audience::WORDS[1]
                ),
            );
            Audience::Everyone
        }),
    };
    if cx.diags.len() > before {
        return None;
    }
    Some(View {
        audience,
        title: v.title.unwrap_or_else(|| humanize(&name)),
        name,
        description: v.description,
        query: v.query.into_inner(),
        columns,
        key: v.key,
        record: v.record.map(Spanned::into_inner),
        json_columns: v.json_columns,
        labels: Default::default(),
    })
}

/// A view's `record` query opens one row by the view's key: it needs a key
/// column and takes exactly the parameter `:key`.
fn check_record_query(
    cx: &mut LoadContext<'_>,
    rel: &str,
    line: usize,
    subject: &Option<String>,
    has_key: bool,
    sql: &str,
) {
    if !has_key {
        cx.diags.push(
            rel,
            Some(line),
            subject.clone(),
            "a view with a `record` query needs a `key` column",
        );
    }
    match cx.prepare(SandboxMode::WorldRead, sql) {
        Ok(prepared) => {
            if prepared.parameters != ["key"] {
                cx.diags.push(
                    rel,
                    Some(line),
                    subject.clone(),
                    "the record query must use exactly one parameter, :key",
                );
            }
        }
        Err(m) => cx.diags.push(
            rel,
            Some(line),
            subject.clone(),
            format!("record query does not prepare: {m}"),
        ),
    }
}
