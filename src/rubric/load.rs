//! Loading a rubric file: parse, then check what belongs to the file as a
//! whole (format, task, version, sections, criterion ids and points, the
//! `forbidden` and `gold` entries) and hand each criterion's own fields to
//! its kind (see `kinds/`), reporting every problem with its file, line and
//! criterion.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::criterion::{Check, Criterion, CriterionKind};
use super::format::{CriterionToml, ForbiddenToml, GoldToml, RubricToml, SectionToml, FORMAT};
use super::kinds::compile::{check_tool, line_of, schema_errors, CompileCx, Probe, Problems};
use super::matchers::{as_f64, toml_to_json};
use super::{Forbidden, GoldExample, Rubric, Section};
use crate::action::Action;
use crate::world::{Diagnostics, Task, World};

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
    let refuse = |diags: &mut Diagnostics, e: toml::de::Error| {
        diags.push(
            rel,
            e.span().map(|s| line_of(text, s.start)),
            None,
            e.message().trim().to_string(),
        );
    };
    // Parsed once, then read twice: as the rubric, and as the raw tables,
    // so each criterion's hash and display form are exactly what was
    // written.
    let document = match toml::de::DeTable::parse(text) {
        Ok(d) => d,
        Err(e) => {
            refuse(diags, e);
            return None;
        }
    };
    let parsed = match RubricToml::deserialize(toml::de::Deserializer::from(document.clone())) {
        Ok(p) => p,
        Err(e) => {
            refuse(diags, e);
            return None;
        }
    };
    let raw = toml::Table::deserialize(toml::de::Deserializer::from(document)).unwrap_or_default();
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
                required: c.required.unwrap_or(true),
                section: c.section.clone(),
                kind,
                spec,
                hash,
                line,
                check,
            });
        }
    }
    super::commit::allow_each_others_answers(&mut criteria);
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

fn compile_criterion(
    world: &World,
    task: &Task,
    c: &CriterionToml,
    text: &str,
    problems: &mut Problems,
    probe: &mut Probe<'_>,
) -> Option<(CriterionKind, Check, f64)> {
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
    let Some(kind) = CriterionKind::parse(&c.kind) else {
        problems.push((
            None,
            format!(
                "unknown kind `{}`; expected state, action, message, scope or judged",
                c.kind
            ),
        ));
        return None;
    };
    // Fields that belong to other kinds are mistakes, not silent no-ops.
    let stray: Vec<&str> = kind_fields_set(c)
        .into_iter()
        .filter(|name| !kind.fields().contains(name))
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
    let mut cx = CompileCx {
        world,
        task,
        text,
        probe,
        problems,
    };
    Check::compile(kind, c, &mut cx).map(|check| (kind, check, points))
}

/// The kind-specific fields `c` sets, in the order the format lists them.
fn kind_fields_set(c: &CriterionToml) -> Vec<&'static str> {
    [
        ("query", c.query.is_some()),
        ("expect", c.expect.is_some()),
        ("changes", c.changes.is_some()),
        ("tool", c.tool.is_some()),
        ("args", c.args.is_some()),
        ("count", c.count.is_some()),
        ("called", c.called.is_some()),
        ("before", c.before.is_some()),
        ("after", c.after.is_some()),
        ("include_failed", c.include_failed.is_some()),
        ("contains", c.contains.is_some()),
        ("regex", c.regex.is_some()),
        ("number", c.number.is_some()),
        ("tolerance", c.tolerance.is_some()),
        ("date", c.date.is_some()),
        ("within", c.within.is_some()),
        ("commit", c.commit.is_some()),
        ("allow", c.allow.is_some()),
        ("max_values", c.max_values.is_some()),
        ("max_length", c.max_length.is_some()),
        ("guidance", c.guidance.is_some()),
        ("check", c.check.is_some()),
        ("tables", c.tables.is_some()),
        ("paths", c.paths.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
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
    let errors = schema_errors(world, tool, &args);
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
            } else {
                let errors = schema_errors(world, tool, args);
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
