//! Loading a rubric: parse, then check everything against the world the
//! way world loading does (tools exist, arguments are declared parameters,
//! SQL prepares and only reads, matchers compile), reporting every problem
//! with its file, line and criterion.

use std::collections::{HashMap, HashSet};

use chrono::NaiveDate;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::criteria::{ActionCheck, Check, Criterion, CriterionKind, Expect, Pattern, Within};
use super::format::{CriterionToml, ForbiddenToml, GoldToml, RubricToml, SectionToml, FORMAT};
use super::matchers::{as_f64, toml_to_json, Matcher, TextPattern, MATCHER_KEYS};
use super::numbers;
use super::{Forbidden, GoldExample, Rubric, Section};
use crate::action::Action;
use crate::episode::Episode;
use crate::world::{Diagnostics, Task, World, VIEW_TOOL_PREFIX};

/// Runs validation queries; created on first use and shared by every file
/// of one load, since creating an episode copies the world's database.
pub(crate) struct Probe<'w> {
    world: &'w std::sync::Arc<World>,
    episode: Option<Episode>,
}

impl<'w> Probe<'w> {
    pub fn new(world: &'w std::sync::Arc<World>) -> Self {
        Probe {
            world,
            episode: None,
        }
    }

    fn run(&mut self, sql: &str) -> Result<(), String> {
        if self.episode.is_none() {
            self.episode =
                Some(Episode::new(std::sync::Arc::clone(self.world)).map_err(|e| e.to_string())?);
        }
        let ep = self.episode.as_ref().ok_or("no episode")?;
        ep.query(sql, &serde_json::Map::new())
            .map(|_| ())
            .map_err(|e| {
                let text = match &e {
                    crate::error::Error::Sqlite(s) => crate::world::sql_message(s),
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

/// Parses and validates one rubric file's text. Problems go to `diags`;
/// `None` when there was any.
pub(crate) fn compile(
    world: &World,
    task_id: &str,
    rel: &str,
    text: &str,
    probe: &mut Probe<'_>,
    diags: &mut Diagnostics,
) -> Option<Rubric> {
    let before = diags.len();
    let parsed: RubricToml = match toml::from_str(text) {
        Ok(p) => p,
        Err(e) => {
            diags.push(
                rel,
                e.span().map(|s| line_of(text, s.start)),
                None,
                e.message().trim().to_string(),
            );
            return None;
        }
    };
    // The raw tables, so each criterion's hash and display form are exactly
    // what was written.
    let raw: toml::Table = toml::from_str(text).unwrap_or_default();
    let raw_criteria: Vec<toml::Value> = raw
        .get("criteria")
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();

    if parsed.format != FORMAT {
        diags.push(
            rel,
            Some(1),
            Some("format".into()),
            format!(
                "unsupported rubric format {}; this build reads format {FORMAT}",
                parsed.format
            ),
        );
    }
    let Some(task) = world.task(task_id) else {
        diags.push(
            rel,
            None,
            None,
            format!(
                "there is no task `{task_id}` in world `{}`; a rubric file is named after its task",
                world.meta.id
            ),
        );
        return None;
    };
    if let Some(t) = &parsed.task {
        if t != task_id {
            diags.push(
                rel,
                None,
                Some("task".into()),
                format!("says task `{t}` but the file is named for `{task_id}`"),
            );
        }
    }
    if parsed.version.trim().is_empty() {
        diags.push(
            rel,
            None,
            Some("version".into()),
            "version must not be empty (e.g. \"1\")",
        );
    }

    let sections = compile_sections(&parsed.sections, rel, text, diags);
    let section_ids: HashSet<&str> = sections.iter().map(|s| s.id.as_str()).collect();

    let mut criteria = Vec::new();
    let mut seen = HashSet::new();
    for (i, spanned) in parsed.criteria.iter().enumerate() {
        let line = line_of(text, spanned.span().start);
        let c = spanned.get_ref();
        let subject = Some(format!("criterion `{}`", c.id));
        if !is_id(&c.id) {
            diags.push(rel, Some(line), subject.clone(), "id must be lowercase letters, digits, `-`, `_` or `.`, starting with a letter or digit");
        } else if !seen.insert(c.id.clone()) {
            diags.push(
                rel,
                Some(line),
                subject.clone(),
                "this id is used by an earlier criterion; ids must be unique",
            );
        }
        let spec = raw_criteria.get(i).map(toml_to_json).unwrap_or(Value::Null);
        let mut problems = Vec::new();
        let compiled = compile_criterion(world, task, c, text, &mut problems, probe);
        if let Some(s) = &c.section {
            if !section_ids.contains(s.as_str()) {
                problems.push((
                    None,
                    format!("section `{s}` is not defined in [[sections]]"),
                ));
            }
        } else if !sections.is_empty() {
            problems.push((
                None,
                "this rubric has sections, so every criterion must name its `section`".into(),
            ));
        }
        for (at, msg) in problems {
            diags.push(rel, Some(at.unwrap_or(line)), subject.clone(), msg);
        }
        if let Some((kind, check, points)) = compiled {
            let hash = hex::encode(Sha256::digest(format!("{spec}").as_bytes()));
            criteria.push(Criterion {
                id: c.id.clone(),
                description: c.description.trim().to_string(),
                points,
                gate: c.gate,
                section: c.section.clone(),
                kind,
                spec,
                hash,
                line,
                check,
            });
        }
    }
    if parsed.criteria.is_empty() {
        diags.push(
            rel,
            None,
            None,
            "a rubric needs at least one [[criteria]] entry",
        );
    } else if diags.len() == before && !criteria.iter().any(|c| c.points > 0.0) {
        diags.push(rel, None, None, "no criterion has positive points, so no score can be computed (score = Σ met points / Σ positive points)");
    }
    check_section_contents(&sections, &criteria, rel, diags);

    let mut forbidden = Vec::new();
    for f in &parsed.forbidden {
        let line = line_of(text, f.span().start);
        if let Some(x) = compile_forbidden(world, task, f.get_ref(), rel, line, diags) {
            forbidden.push(x);
        }
    }

    let mut gold = Vec::new();
    for (n, g) in parsed.gold.iter().enumerate() {
        let line = line_of(text, g.span().start);
        if let Some(x) = compile_gold(world, task, g.get_ref(), n + 1, rel, line, diags) {
            gold.push(x);
        }
    }

    if !parsed.solution_is_gold && parsed.gold.is_empty() {
        diags.push(
            rel,
            None,
            Some("solution_is_gold".into()),
            "solution_is_gold = false needs at least one [[gold]] run to check the rubric against",
        );
    }

    if diags.len() > before {
        return None;
    }
    Some(Rubric {
        task_id: task_id.to_string(),
        format: parsed.format,
        version: parsed.version.trim().to_string(),
        title: parsed.title,
        notes: parsed.notes,
        hash: hex::encode(Sha256::digest(text.as_bytes())),
        path: world.root.join(rel),
        sections,
        criteria,
        forbidden,
        gold,
        solution_is_gold: parsed.solution_is_gold,
        world_id: world.meta.id.clone(),
        world_hash: world.content_hash.clone(),
        task_hash: String::new(),
    })
}

/// 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn is_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
}

fn compile_sections(
    list: &[toml::Spanned<SectionToml>],
    rel: &str,
    text: &str,
    diags: &mut Diagnostics,
) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut lines = HashMap::new();
    for s in list {
        let line = line_of(text, s.span().start);
        let sec = s.get_ref();
        let subject = Some(format!("section `{}`", sec.id));
        if !is_id(&sec.id) {
            diags.push(
                rel,
                Some(line),
                subject.clone(),
                "id must be lowercase letters, digits, `-`, `_` or `.`",
            );
        }
        if lines.insert(sec.id.clone(), line).is_some() {
            diags.push(
                rel,
                Some(line),
                subject.clone(),
                "this section id is already used",
            );
        }
        let weight = match &sec.weight {
            None => 1.0,
            Some(w) => match as_f64(w).filter(|w| *w > 0.0 && w.is_finite()) {
                Some(w) => w,
                None => {
                    diags.push(
                        rel,
                        Some(line),
                        subject.clone(),
                        "weight must be a number greater than 0",
                    );
                    1.0
                }
            },
        };
        out.push(Section {
            id: sec.id.clone(),
            title: if sec.title.is_empty() {
                sec.id.clone()
            } else {
                sec.title.clone()
            },
            weight,
            parent: sec.parent.clone(),
        });
    }
    for s in &out {
        let line = lines.get(&s.id).copied();
        if let Some(p) = &s.parent {
            if !lines.contains_key(p) {
                diags.push(
                    rel,
                    line,
                    Some(format!("section `{}`", s.id)),
                    format!("parent section `{p}` is not defined"),
                );
                continue;
            }
            // Walk up; a walk longer than the number of sections is a cycle.
            let mut cur = Some(p.clone());
            let mut steps = 0;
            while let Some(c) = cur {
                steps += 1;
                if c == s.id || steps > out.len() {
                    diags.push(
                        rel,
                        line,
                        Some(format!("section `{}`", s.id)),
                        "sections form a cycle through `parent`",
                    );
                    break;
                }
                cur = out
                    .iter()
                    .find(|x| x.id == c)
                    .and_then(|x| x.parent.clone());
            }
        }
    }
    out
}

/// A section holds criteria or sub-sections, and one holding criteria needs
/// a criterion with positive points to have a score at all.
fn check_section_contents(
    sections: &[Section],
    criteria: &[Criterion],
    rel: &str,
    diags: &mut Diagnostics,
) {
    for s in sections {
        let children = sections.iter().any(|x| x.parent.as_deref() == Some(&s.id));
        let own: Vec<&Criterion> = criteria
            .iter()
            .filter(|c| c.section.as_deref() == Some(&s.id))
            .collect();
        let subject = Some(format!("section `{}`", s.id));
        if children && !own.is_empty() {
            diags.push(rel, None, subject, "holds both criteria and sub-sections; put the criteria in a sub-section of their own");
        } else if !children && own.is_empty() {
            diags.push(
                rel,
                None,
                subject,
                "is empty: no criterion or sub-section belongs to it",
            );
        } else if !children && !own.iter().any(|c| c.points > 0.0) {
            diags.push(
                rel,
                None,
                subject,
                "has no criterion with positive points, so its score is undefined",
            );
        }
    }
}

type Problems = Vec<(Option<usize>, String)>;

fn compile_criterion(
    world: &World,
    task: &Task,
    c: &CriterionToml,
    text: &str,
    problems: &mut Problems,
    probe: &mut Probe<'_>,
) -> Option<(CriterionKind, Check, f64)> {
    let at = |s: &toml::Spanned<String>| Some(line_of(text, s.span().start));
    if c.description.trim().is_empty() {
        problems.push((
            None,
            "description must say, in words an expert can check, what is being graded".into(),
        ));
    }
    let points = match &c.points {
        None if c.gate => 0.0,
        None => {
            problems.push((
                None,
                "points is missing: positive for what must happen, negative for what must not"
                    .into(),
            ));
            0.0
        }
        Some(p) => match as_f64(p).filter(|p| p.is_finite()) {
            Some(p) => p,
            None => {
                problems.push((None, "points must be a number".into()));
                0.0
            }
        },
    };
    if c.gate && points < 0.0 {
        problems.push((None, "a gate states what must hold (it zeroes the score when not met); give it 0 or positive points".into()));
    }
    if !c.gate && points == 0.0 && c.points.is_some() {
        problems.push((
            None,
            "points must not be 0 (only a gate may carry no points)".into(),
        ));
    }
    let kind = match c.kind.as_str() {
        "state" => CriterionKind::State,
        "action" => CriterionKind::Action,
        "message" => CriterionKind::Message,
        "judged" => CriterionKind::Judged,
        other => {
            problems.push((
                None,
                format!("unknown kind `{other}`; expected state, action, message or judged"),
            ));
            return None;
        }
    };
    // Fields that belong to other kinds are mistakes, not silent no-ops.
    let present: Vec<(&str, bool, CriterionKind)> = vec![
        ("query", c.query.is_some(), CriterionKind::State),
        ("expect", c.expect.is_some(), CriterionKind::State),
        ("changes", c.changes.is_some(), CriterionKind::State),
        ("tool", c.tool.is_some(), CriterionKind::Action),
        ("args", c.args.is_some(), CriterionKind::Action),
        ("count", c.count.is_some(), CriterionKind::Action),
        ("called", c.called.is_some(), CriterionKind::Action),
        ("before", c.before.is_some(), CriterionKind::Action),
        ("after", c.after.is_some(), CriterionKind::Action),
        (
            "include_failed",
            c.include_failed.is_some(),
            CriterionKind::Action,
        ),
        ("contains", c.contains.is_some(), CriterionKind::Message),
        ("regex", c.regex.is_some(), CriterionKind::Message),
        ("number", c.number.is_some(), CriterionKind::Message),
        ("tolerance", c.tolerance.is_some(), CriterionKind::Message),
        ("date", c.date.is_some(), CriterionKind::Message),
        ("within", c.within.is_some(), CriterionKind::Message),
        ("guidance", c.guidance.is_some(), CriterionKind::Judged),
    ];
    // `after` also orders messages ("confirm after the upgrade").
    let stray: Vec<&str> = present
        .iter()
        .filter(|(n, set, k)| {
            *set && *k != kind && !(*n == "after" && kind == CriterionKind::Message)
        })
        .map(|(n, _, _)| *n)
        .collect();
    if !stray.is_empty() {
        problems.push((
            None,
            format!(
                "{} do(es) not apply to {} criteria",
                stray.join(", "),
                c.kind
            ),
        ));
    }
    let check = match kind {
        CriterionKind::State => compile_state(world, c, text, problems, probe),
        CriterionKind::Action => {
            let tool = match &c.tool {
                Some(t) => t,
                None => {
                    problems.push((None, "an action criterion needs `tool`".into()));
                    return None;
                }
            };
            let line = at(tool);
            let args = compile_args(
                world,
                task,
                tool.get_ref(),
                c.args.as_ref(),
                "args",
                line,
                problems,
            );
            let (min, max) = compile_count(c, problems);
            let after = c
                .after
                .as_ref()
                .and_then(|p| compile_pattern(world, task, p, "after", line, problems));
            let before = c
                .before
                .as_ref()
                .and_then(|p| compile_pattern(world, task, p, "before", line, problems));
            Some(Check::Action(ActionCheck {
                tool: tool.get_ref().clone(),
                args: args?,
                min,
                max,
                include_failed: c.include_failed.unwrap_or(false),
                after,
                before,
            }))
        }
        CriterionKind::Message => {
            let within = match c.within.as_deref() {
                None | Some("any") => Within::Any,
                Some("last") => Within::Last,
                Some(other) => {
                    problems.push((
                        None,
                        format!(
                            "within = \"{other}\" is not known; use \"any\" (default) or \"last\""
                        ),
                    ));
                    Within::Any
                }
            };
            let pattern = compile_text_pattern(
                c.contains.as_deref(),
                c.regex.as_deref(),
                c.number.as_ref(),
                c.tolerance.as_ref(),
                c.date.as_ref(),
            );
            let after = c
                .after
                .as_ref()
                .and_then(|p| compile_pattern(world, task, p, "after", None, problems));
            match pattern {
                Ok(p) => Some(Check::Message {
                    within,
                    pattern: p,
                    after,
                }),
                Err(e) => {
                    problems.push((None, e));
                    None
                }
            }
        }
        CriterionKind::Judged => Some(Check::Judged {
            guidance: c.guidance.clone().unwrap_or_default(),
        }),
    };
    check.map(|ch| (kind, ch, points))
}

fn compile_state(
    world: &World,
    c: &CriterionToml,
    text: &str,
    problems: &mut Problems,
    probe: &mut Probe<'_>,
) -> Option<Check> {
    match (&c.query, &c.changes) {
        (Some(_), Some(_)) => {
            problems.push((
                None,
                "a state criterion has either `query` + `expect` or `changes`, not both".into(),
            ));
            None
        }
        (None, None) => {
            problems.push((
                None,
                "a state criterion needs `query` (with `expect`) or `changes`".into(),
            ));
            None
        }
        (Some(q), None) => {
            let line = Some(line_of(text, q.span().start));
            let sql = q.get_ref().trim().to_string();
            if let Some(p) = first_parameter(&sql) {
                problems.push((line, format!("the query uses the parameter `{p}`; rubric queries take no parameters, write values in the SQL")));
            } else if let Err(e) = probe.run(&sql) {
                problems.push((
                    line,
                    format!("the query does not run on the seeded world: {e}"),
                ));
            }
            let Some(expect) = &c.expect else {
                problems.push((line, "a query needs `expect`, e.g. { equals = 1 }, { rows = 0 }, { number = 79.0, tolerance = 0.005 }".into()));
                return None;
            };
            match compile_expect(expect) {
                Ok(e) => Some(Check::Query { sql, expect: e }),
                Err(e) => {
                    problems.push((None, format!("expect: {e}")));
                    None
                }
            }
        }
        (None, Some(ch)) => {
            if c.expect.is_some() {
                problems.push((
                    None,
                    "`expect` goes with `query`; `changes` is its own expectation".into(),
                ));
            }
            compile_changes(world, ch, problems)
        }
    }
}

fn compile_changes(world: &World, v: &toml::Value, problems: &mut Problems) -> Option<Check> {
    let usage = "changes must be { only = [{ table = \"..\", key = \"..\" }, ...] } (key optional: any record of the table) or { none = true }";
    let Some(t) = v.as_table() else {
        problems.push((None, usage.into()));
        return None;
    };
    if t.len() == 1 && t.get("none").and_then(|v| v.as_bool()) == Some(true) {
        return Some(Check::Changes { only: Vec::new() });
    }
    let Some(list) = t
        .get("only")
        .and_then(|v| v.as_array())
        .filter(|_| t.len() == 1)
    else {
        problems.push((None, usage.into()));
        return None;
    };
    let mut only = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let Some(entry) = item.as_table() else {
            problems.push((None, format!("changes.only[{i}]: {usage}")));
            continue;
        };
        let Some(table) = entry.get("table").and_then(|v| v.as_str()) else {
            problems.push((None, format!("changes.only[{i}] needs `table`")));
            continue;
        };
        if world.table(table).is_none() {
            let known: Vec<&str> = world.tables.iter().map(|t| t.name.as_str()).collect();
            problems.push((
                None,
                format!(
                    "changes.only[{i}]: there is no table `{table}` (tables: {})",
                    known.join(", ")
                ),
            ));
        }
        if let Some(bad) = entry.keys().find(|k| *k != "table" && *k != "key") {
            problems.push((
                None,
                format!("changes.only[{i}]: unknown key `{bad}` (use table and key)"),
            ));
        }
        let key = match entry.get("key") {
            None => None,
            Some(toml::Value::String(s)) => Some(s.clone()),
            Some(toml::Value::Integer(n)) => Some(n.to_string()),
            Some(_) => {
                problems.push((
                    None,
                    format!("changes.only[{i}].key must be text or an integer"),
                ));
                None
            }
        };
        only.push((table.to_string(), key));
    }
    Some(Check::Changes { only })
}

fn compile_expect(v: &toml::Value) -> Result<Expect, String> {
    let usage = "expect must be a table: { equals = .. }, { any_of = [..] }, { number = .., tolerance = .. }, { regex = \"..\" }, { contains = \"..\" }, { null = true|false }, { json = \"<JSON document>\" } or { rows = n | { min = .., max = .. } }";
    let t = v.as_table().ok_or(usage)?;
    if t.is_empty() {
        return Err(usage.into());
    }
    let special = ["rows", "json", "null"];
    if let Some(k) = t
        .keys()
        .find(|k| !special.contains(&k.as_str()) && !MATCHER_KEYS.contains(&k.as_str()))
    {
        return Err(format!("unknown key `{k}`; {usage}"));
    }
    if t.len() == 1 {
        if let Some(rows) = t.get("rows") {
            return match rows {
                toml::Value::Integer(n) if *n >= 0 => Ok(Expect::Rows {
                    min: *n as usize,
                    max: Some(*n as usize),
                }),
                toml::Value::Table(r) => {
                    let get = |k: &str| -> Result<Option<usize>, String> {
                        match r.get(k) {
                            None => Ok(None),
                            Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Some(*n as usize)),
                            Some(_) => Err(format!("rows.{k} must be a whole number ≥ 0")),
                        }
                    };
                    if let Some(k) = r.keys().find(|k| *k != "min" && *k != "max") {
                        return Err(format!("rows: unknown key `{k}` (use min and max)"));
                    }
                    let (min, max) = (get("min")?.unwrap_or(0), get("max")?);
                    if max.is_some_and(|m| m < min) {
                        return Err("rows.max is smaller than rows.min".into());
                    }
                    Ok(Expect::Rows { min, max })
                }
                _ => Err("rows must be a whole number ≥ 0 or { min = .., max = .. }".into()),
            };
        }
        if let Some(j) = t.get("json") {
            let text = j
                .as_str()
                .ok_or("json must be the expected document as JSON text")?;
            return serde_json::from_str::<Value>(text)
                .map(Expect::Json)
                .map_err(|e| format!("json is not valid JSON: {e}"));
        }
        if let Some(n) = t.get("null") {
            return n
                .as_bool()
                .map(Expect::Null)
                .ok_or_else(|| "null must be true or false".into());
        }
    }
    if t.keys().any(|k| special.contains(&k.as_str())) {
        return Err(format!("combine one expectation per criterion; {usage}"));
    }
    Matcher::parse(v).map(Expect::Value)
}

/// The first `:name`, `@name`, `$name` or `?` outside quotes and comments.
fn first_parameter(sql: &str) -> Option<String> {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            b'[' => {
                while i < b.len() && b[i] != b']' {
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'?' => return Some("?".into()),
            p @ (b':' | b'@' | b'$')
                if b.get(i + 1)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') =>
            {
                let end = (i + 1..b.len())
                    .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_'))
                    .unwrap_or(b.len());
                return Some(format!("{}{}", p as char, &sql[i + 1..end]));
            }
            _ => {}
        }
        i += 1;
    }
    None
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

fn check_tool(world: &World, task: &Task, name: &str) -> Result<Value, String> {
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

fn compile_args(
    world: &World,
    task: &Task,
    tool: &str,
    args: Option<&toml::Table>,
    field: &str,
    line: Option<usize>,
    problems: &mut Problems,
) -> Option<Vec<(String, Matcher)>> {
    let params = match check_tool(world, task, tool) {
        Ok(p) => p,
        Err(e) => {
            problems.push((line, e));
            return None;
        }
    };
    let declared: Vec<String> = params
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut ok = true;
    for (name, v) in args.into_iter().flatten() {
        if !declared.contains(name) {
            problems.push((
                line,
                format!(
                    "{field}: tool `{tool}` has no parameter `{name}` (parameters: {})",
                    declared.join(", ")
                ),
            ));
            ok = false;
            continue;
        }
        match Matcher::parse(v) {
            Ok(m) => out.push((name.clone(), m)),
            Err(e) => {
                problems.push((line, format!("{field}.{name}: {e}")));
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

fn compile_count(c: &CriterionToml, problems: &mut Problems) -> (usize, Option<usize>) {
    match (&c.count, c.called) {
        (Some(_), Some(_)) => {
            problems.push((None, "use either `called` or `count`, not both".into()));
            (1, None)
        }
        (None, Some(false)) => (0, Some(0)),
        (None, _) => (1, None),
        (Some(toml::Value::Integer(n)), None) if *n >= 0 => (*n as usize, Some(*n as usize)),
        (Some(toml::Value::Table(t)), None) => {
            let get = |k: &str| match t.get(k) {
                None => Ok(None),
                Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Some(*n as usize)),
                Some(_) => Err(format!("count.{k} must be a whole number ≥ 0")),
            };
            if let Some(k) = t.keys().find(|k| *k != "min" && *k != "max") {
                problems.push((None, format!("count: unknown key `{k}` (use min and max)")));
            }
            match (get("min"), get("max")) {
                (Ok(min), Ok(max)) => {
                    let min = min.unwrap_or(0);
                    if max.is_some_and(|m| m < min) {
                        problems.push((None, "count.max is smaller than count.min".into()));
                    }
                    if min == 0 && max.is_none() {
                        problems.push((
                            None,
                            "count = { min = 0 } always holds; give a max, or use called = false"
                                .into(),
                        ));
                    }
                    (min, max)
                }
                (Err(e), _) | (_, Err(e)) => {
                    problems.push((None, e));
                    (1, None)
                }
            }
        }
        (Some(_), None) => {
            problems.push((
                None,
                "count must be a whole number ≥ 0 or { min = .., max = .. }".into(),
            ));
            (1, None)
        }
    }
}

fn compile_pattern(
    world: &World,
    task: &Task,
    t: &toml::Table,
    field: &str,
    line: Option<usize>,
    problems: &mut Problems,
) -> Option<Pattern> {
    if let Some(m) = t.get("message") {
        if t.len() != 1 {
            problems.push((line, format!("{field}: a message pattern is {{ message = {{ contains|regex|number|date = .. }} }} and nothing else")));
            return None;
        }
        let Some(mt) = m.as_table() else {
            problems.push((
                line,
                format!("{field}.message must be a table such as {{ number = 108.39 }}"),
            ));
            return None;
        };
        if let Some(k) = mt
            .keys()
            .find(|k| !["contains", "regex", "number", "tolerance", "date"].contains(&k.as_str()))
        {
            problems.push((line, format!("{field}.message: unknown key `{k}`")));
            return None;
        }
        let s = |k: &str| mt.get(k).and_then(|v| v.as_str());
        return match compile_text_pattern(
            s("contains"),
            s("regex"),
            mt.get("number"),
            mt.get("tolerance"),
            mt.get("date"),
        ) {
            Ok(p) => Some(Pattern::Message(p)),
            Err(e) => {
                problems.push((line, format!("{field}.message: {e}")));
                None
            }
        };
    }
    let Some(tool) = t.get("tool").and_then(|v| v.as_str()) else {
        problems.push((line, format!("{field} needs `tool` (or `message`), e.g. {field} = {{ tool = \"verify_identity\" }}")));
        return None;
    };
    if let Some(k) = t
        .keys()
        .find(|k| !["tool", "args", "include_failed"].contains(&k.as_str()))
    {
        problems.push((
            line,
            format!("{field}: unknown key `{k}` (use tool, args, include_failed)"),
        ));
        return None;
    }
    let args = match t.get("args") {
        None => None,
        Some(toml::Value::Table(a)) => Some(a),
        Some(_) => {
            problems.push((line, format!("{field}.args must be a table")));
            return None;
        }
    };
    let include_failed = match t.get("include_failed") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(_) => {
            problems.push((
                line,
                format!("{field}.include_failed must be true or false"),
            ));
            return None;
        }
    };
    let args = compile_args(
        world,
        task,
        tool,
        args,
        &format!("{field}.args"),
        line,
        problems,
    )?;
    Some(Pattern::Tool {
        tool: tool.to_string(),
        args,
        include_failed,
    })
}

fn compile_text_pattern(
    contains: Option<&str>,
    regex: Option<&str>,
    number: Option<&toml::Value>,
    tolerance: Option<&toml::Value>,
    date: Option<&toml::Value>,
) -> Result<TextPattern, String> {
    let given = [
        contains.is_some(),
        regex.is_some(),
        number.is_some(),
        date.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if given != 1 {
        return Err("a message check needs exactly one of contains, regex, number or date".into());
    }
    if tolerance.is_some() && number.is_none() {
        return Err("`tolerance` goes with `number`".into());
    }
    if let Some(c) = contains {
        if c.trim().is_empty() {
            return Err("`contains` must not be empty".into());
        }
        return Ok(TextPattern::Contains(numbers::normalize(c)));
    }
    if let Some(r) = regex {
        return regex::Regex::new(r)
            .map(TextPattern::Regex)
            .map_err(|e| format!("`regex` does not compile: {e}"));
    }
    if let Some(n) = number {
        let value = match n {
            toml::Value::String(s) => numbers::parse_number(s)
                .ok_or_else(|| format!("`number` = {s:?} does not read as a number"))?,
            other => as_f64(other).ok_or("`number` must be a number")?,
        };
        let tolerance = match tolerance {
            None => 0.0,
            Some(t) => as_f64(t)
                .filter(|t| *t >= 0.0)
                .ok_or("`tolerance` must be a number ≥ 0")?,
        };
        return Ok(TextPattern::Number { value, tolerance });
    }
    let d = date.ok_or("no pattern")?;
    let text = match d {
        toml::Value::String(s) => s.clone(),
        toml::Value::Datetime(dt) => dt.to_string(),
        _ => return Err("`date` must be a date such as \"2025-04-01\"".into()),
    };
    let date = NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .map_err(|_| format!("`date` = {text:?} is not a date in YYYY-MM-DD form"))?;
    Ok(TextPattern::Date(date, numbers::date_regex(date)))
}

fn compile_forbidden(
    world: &World,
    task: &Task,
    f: &ForbiddenToml,
    rel: &str,
    line: usize,
    diags: &mut Diagnostics,
) -> Option<Forbidden> {
    let (tool, message) = match (&f.tool, &f.message) {
        (Some(t), None) => (t, None),
        (None, Some(m)) if f.args.is_empty() && !m.trim().is_empty() => {
            return Some(Forbidden {
                action: Action::message(m.clone()),
                why: f.why.trim().to_string(),
                line,
            });
        }
        (None, Some(_)) => (&String::new(), Some(())),
        _ => {
            diags.push(
                rel,
                Some(line),
                Some("forbidden".into()),
                "a forbidden entry is either { tool = .., args = {..} } or { message = \"..\" }",
            );
            return None;
        }
    };
    if message.is_some() {
        diags.push(
            rel,
            Some(line),
            Some("forbidden".into()),
            "a forbidden message needs non-empty text and no args",
        );
        return None;
    }
    let subject = Some(format!("forbidden `{tool}`"));
    if let Err(e) = check_tool(world, task, tool) {
        diags.push(rel, Some(line), subject, e);
        return None;
    }
    let args = match toml_to_json(&toml::Value::Table(f.args.clone())) {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    if let Some(t) = world.tools.get(tool) {
        let instance = Value::Object(args.clone());
        let errors: Vec<String> = t
            .validator
            .iter_errors(&instance)
            .map(|e| crate::world::describe_schema_error(&e))
            .collect();
        if !errors.is_empty() {
            diags.push(
                rel,
                Some(line),
                subject,
                format!(
                    "args do not fit the tool's parameters: {}",
                    errors.join("; ")
                ),
            );
            return None;
        }
    }
    Some(Forbidden {
        action: Action::Tool {
            tool: tool.clone(),
            args,
        },
        why: f.why.trim().to_string(),
        line,
    })
}

fn compile_gold(
    world: &World,
    task: &Task,
    g: &GoldToml,
    n: usize,
    rel: &str,
    line: usize,
    diags: &mut Diagnostics,
) -> Option<GoldExample> {
    let subject = Some(format!("gold {n}"));
    let mut actions = Vec::new();
    let mut ok = true;
    for (i, raw) in g.actions.iter().enumerate() {
        let action = match Action::from_json(&toml_to_json(raw)) {
            Ok(a) => a,
            Err(e) => {
                diags.push(
                    rel,
                    Some(line),
                    subject.clone(),
                    format!("action {}: {e}", i + 1),
                );
                ok = false;
                continue;
            }
        };
        if let Action::Tool { tool, args } = &action {
            if let Err(e) = check_tool(world, task, tool) {
                diags.push(
                    rel,
                    Some(line),
                    subject.clone(),
                    format!("action {}: {e}", i + 1),
                );
                ok = false;
            } else if let Some(t) = world.tools.get(tool) {
                let errors: Vec<String> = t
                    .validator
                    .iter_errors(&Value::Object(args.clone()))
                    .map(|e| crate::world::describe_schema_error(&e))
                    .collect();
                if !errors.is_empty() {
                    diags.push(
                        rel,
                        Some(line),
                        subject.clone(),
                        format!("action {} ({tool}): {}", i + 1, errors.join("; ")),
                    );
                    ok = false;
                }
            }
        }
        actions.push(action);
    }
    ok.then(|| GoldExample {
        actions,
        why: g.why.trim().to_string(),
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::first_parameter;

    #[test]
    fn finds_parameters_outside_quotes_and_comments() {
        assert_eq!(
            first_parameter("SELECT 1 FROM t WHERE a = :x"),
            Some(":x".into())
        );
        assert_eq!(first_parameter("SELECT ':x', \"@y\" -- $z\n FROM t"), None);
        assert_eq!(
            first_parameter("SELECT * FROM t WHERE a = ?"),
            Some("?".into())
        );
        assert_eq!(first_parameter("SELECT '10:30' /* :no */"), None);
    }
}
