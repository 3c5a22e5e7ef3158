//! Rubrics derived from a task's gold solution, τ-bench style but with
//! partial credit and explanations:
//!
//! - for each record the gold run adds or changes, a state criterion that
//!   the record equals gold's (the whole JSON document, typed: 68 ≠ 68.0,
//!   key order ignored), and for each record it removes, that it is gone;
//! - a gate that nothing else changed;
//! - for each of the task's `outputs`, a message criterion (as a number when
//!   it reads as one, so "10" never matches "100");
//! - when the gold run changes nothing (its calls fail on purpose), an
//!   action criterion per gold write call, failed calls included, so doing
//!   nothing still scores 0;
//! - a forbidden action for lint: a write that succeeds after gold and
//!   touches a record gold leaves alone (found by retargeting write calls
//!   from the world's solutions at records related to this task), so the
//!   "nothing else changed" gate is exercised.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{replay, RUBRICS_DIR};
use crate::action::Action;
use crate::episode::{Changes, Episode};
use crate::error::{Error, Result};
use crate::world::{Task, ToolKind, World};

/// What [`derive_all`] derives (the command line's `--task` and `--force`).
#[derive(Debug, Clone, Default)]
pub struct DeriveOptions {
    /// Only this task; `None` derives every task. A task the world does not
    /// have is an error.
    pub task: Option<String>,
    /// Replace rubric files that already exist.
    pub overwrite: bool,
}

/// What [`derive_all`] did: the files it wrote and the tasks it left alone.
#[derive(Debug, Clone, Default)]
pub struct DeriveSummary {
    /// The rubric files written, in the world's task order.
    pub written: Vec<PathBuf>,
    /// `task: why` for each task left alone.
    pub skipped: Vec<String>,
}

/// Most retargeted calls tried per task when looking for a forbidden action.
const MAX_TRIES: usize = 60;

/// Derives and writes `rubrics/<task>.toml` for every task of the world (or
/// only `options.task`). A task whose solution is empty still gets a draft,
/// from its outputs and guards, with a note asking for a `[[gold]]` run; a
/// file already there is left alone (listed in `skipped`) unless
/// `options.overwrite`.
pub fn derive_all(world: &Arc<World>, options: &DeriveOptions) -> Result<DeriveSummary> {
    if let Some(t) = &options.task {
        if world.task(t).is_none() {
            return Err(Error::UnknownTask {
                world: world.meta.id.clone(),
                task: t.clone(),
            });
        }
    }
    let dir = world.root.join(RUBRICS_DIR);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let templates = super::mutations::write_templates(world);
    let mut episode = Episode::new(Arc::clone(world))?;
    // A draft is derived from gold: an expert's run or the solution.
    episode.set_expert(true);
    let mut summary = DeriveSummary::default();
    for (id, task) in &world.tasks {
        if options.task.as_ref().is_some_and(|t| t != id) {
            continue;
        }
        let path = dir.join(format!("{id}.toml"));
        if path.exists() && !options.overwrite {
            summary.skipped.push(format!(
                "{id}: {} exists (use --force to replace it)",
                path.display()
            ));
            continue;
        }
        // An annotator's gold runs survive a re-derive.
        let kept = kept_gold(&path);
        let gold = solution(task)?;
        let text = checked_draft(world, &mut episode, task, gold, &templates, &kept)?;
        let tmp = path.with_extension("toml.partial");
        std::fs::write(&tmp, &text)
            .map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, &path)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        summary.written.push(path);
    }
    Ok(summary)
}

/// A draft rubric for `task_id` derived from `gold` (an approved run, or
/// the task's solution): the text `derive_all` would write, not written.
pub fn draft(world: &Arc<World>, task_id: &str, gold: Vec<Action>) -> Result<String> {
    let task = world.task(task_id).ok_or_else(|| Error::UnknownTask {
        world: world.meta.id.clone(),
        task: task_id.to_string(),
    })?;
    let mut episode = Episode::new(Arc::clone(world))?;
    // A draft is derived from gold: an expert's run or the solution.
    episode.set_expert(true);
    checked_draft(
        world,
        &mut episode,
        task,
        gold,
        &super::mutations::write_templates(world),
        "",
    )
}

/// The draft of [`derive_task`], linted once when its "nothing else
/// changed" gate has no forbidden run to prove it: if no run lint tries
/// (gold, doing nothing, any mutant) fails the gate, it cannot tell runs
/// apart, and the draft is written without it (lint would refuse it as a
/// constant criterion). The world's guards refuse every extra write then.
fn checked_draft(
    world: &Arc<World>,
    episode: &mut Episode,
    task: &Task,
    gold: Vec<Action>,
    templates: &[Action],
    kept_gold: &str,
) -> Result<String> {
    let text = derive_task(
        world,
        episode,
        task,
        gold.clone(),
        templates,
        kept_gold,
        true,
    )?;
    let unproven = text.contains("id = \"nothing-else-changed\"")
        && !text.contains("[[forbidden]]")
        && !text.contains("[[gold]]");
    if !unproven {
        return Ok(text);
    }
    let Ok(rubric) = super::Rubric::from_str(world, &task.id, "draft", &text) else {
        return Ok(text);
    };
    let lint = super::lint::lint_rubric(
        world,
        Arc::new(rubric),
        None,
        &super::lint::LintOptions::default(),
        &|_| {},
    )?;
    if lint
        .constant_criteria
        .iter()
        .any(|c| c == "nothing-else-changed")
    {
        derive_task(world, episode, task, gold, templates, kept_gold, false)
    } else {
        Ok(text)
    }
}

/// The task's reference solution as actions.
pub fn solution(task: &Task) -> Result<Vec<Action>> {
    task.solution
        .iter()
        .enumerate()
        .map(|(i, a)| {
            Action::from_json(a).map_err(|e| {
                Error::Other(format!("task {}: solution step {}: {e}", task.id, i + 1))
            })
        })
        .collect()
}

type Touched = BTreeSet<(String, String)>;

fn touched(changes: &Changes) -> Touched {
    let mut out = BTreeSet::new();
    for (table, tc) in changes {
        for k in tc.added.keys().chain(tc.changed.keys()) {
            out.insert((table.clone(), k.clone()));
        }
        for k in &tc.removed {
            out.insert((
                table.clone(),
                k.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| k.to_string()),
            ));
        }
    }
    out
}

/// The `[[gold]]` runs of the rubric file at `path`, as TOML text.
fn kept_gold(path: &std::path::Path) -> String {
    let Ok(text) = std::fs::read_to_string(path) else {
        return String::new();
    };
    let Ok(table) = toml::from_str::<toml::Table>(&text) else {
        return String::new();
    };
    let mut out = String::new();
    for g in table
        .get("gold")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        let why = g.get("why").and_then(|v| v.as_str()).unwrap_or_default();
        let actions: Vec<String> = g
            .get("actions")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .map(|a| format!("  {},", inline(&super::matchers::toml_to_json(a))))
            .collect();
        out.push_str(&format!(
            "\n[[gold]]\nwhy = {}\nactions = [\n{}\n]\n",
            q(why),
            actions.join("\n")
        ));
    }
    out
}

/// Text a person writes freely (a note, a reason): five words or more, or
/// longer than 60 characters. Derived criteria leave it open.
fn is_free_text(s: &str) -> bool {
    s.split_whitespace().count() >= 5 || s.chars().count() > 60
}

/// A timestamp (`2025-03-04T09:00:00Z`), which depends on when a step ran.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 16
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && (b[10] == b'T' || b[10] == b' ')
        && b[13] == b':'
}

fn is_open(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| is_free_text(s) || is_timestamp(s))
}

/// The fields of `new` that differ from `old` (all of them when there is
/// no `old`), objects field by field and lists whole, without free text
/// and timestamps.
fn changed_fields(old: Option<&Value>, new: &Value, written: &BTreeSet<&str>) -> Option<Value> {
    if let Value::Object(n) = new {
        let o = old.and_then(Value::as_object);
        if old.is_none() || o.is_some() {
            let fields: Map<String, Value> = n
                .iter()
                .filter_map(|(k, v)| {
                    let before = o.and_then(|o| o.get(k));
                    match (before, v) {
                        (Some(b @ Value::Object(_)), Value::Object(_)) => {
                            changed_fields(Some(b), v, written)
                        }
                        (_, Value::Object(_)) if before != Some(v) => {
                            changed_fields(None, v, written)
                        }
                        _ if is_open(v) => None,
                        // A field gold's calls write, even with the value it
                        // had, is part of what gold did (`country = "USA"`).
                        _ if before == Some(v) && !written.contains(k.as_str()) => None,
                        (_, Value::Object(_)) => None,
                        _ => Some(v.clone()),
                    }
                    .map(|x| (k.clone(), x))
                })
                .collect();
            return (!fields.is_empty()).then_some(Value::Object(fields));
        }
    }
    (old != Some(new) && !is_open(new)).then(|| new.clone())
}

fn derive_task(
    world: &Arc<World>,
    episode: &mut Episode,
    task: &Task,
    gold: Vec<Action>,
    templates: &[Action],
    kept_gold: &str,
    gate: bool,
) -> Result<String> {
    let r = replay(episode, &task.id, 0, &gold)?;
    let changes = episode.changes()?;
    let gold_set = touched(&changes);
    // What gold's own messages say, to tell whether it states the outputs.
    let said = r.messages();
    let states = |output: &str| {
        let date = super::values::dates_in(output).first().map(|d| d.0);
        said.iter()
            .any(|m| match (date, super::numbers::parse_number(output)) {
                (Some(d), _) => super::values::dates_in(m).iter().any(|x| x.0 == d),
                (None, Some(n)) => super::numbers::find_number(m, n, 0.0).is_some(),
                (None, None) => super::numbers::contains_phrase(
                    &super::numbers::normalize(m),
                    &super::numbers::normalize(output),
                ),
            })
    };
    let solution_says_outputs = task.outputs.iter().all(|o| states(o));
    // The seeded version of each changed record, to compare only what changed.
    episode.reset(&task.id, 0)?;
    let written: BTreeSet<&str> = gold
        .iter()
        .filter_map(|a| match a {
            Action::Tool { tool, args }
                if world
                    .tools
                    .get(tool)
                    .is_some_and(|t| t.kind == ToolKind::Write) =>
            {
                Some(args.keys().map(String::as_str))
            }
            _ => None,
        })
        .flatten()
        .collect();

    let mut out = String::new();
    out.push_str(&format!(
        "# Derived from the reference solution of task {} by `understudy rubric derive --from-solution`.\n# Edit freely: `understudy rubric lint` re-checks it against gold, do-nothing and mutants.\n",
        task.id
    ));
    out.push_str(&format!(
        "format = 1\ntask = {}\nversion = \"1\"\ntitle = {}\n",
        q(&task.id),
        q(&task.title)
    ));
    let needs_gold = !solution_says_outputs || gold.is_empty();
    let mut notes: Vec<&str> = Vec::new();
    if !solution_says_outputs {
        notes.push("The reference solution does not tell the user every required output, so it is not a full-marks run; the [[gold]] run says them.");
    }
    if gold.is_empty() {
        notes.push("The task has no gold actions: nothing may change, and the [[gold]] run shows the expected reply. Sharpen `replied` to what the reply must say.");
    }
    let mut ids: BTreeSet<String> = BTreeSet::new();
    let mut unique = |base: String| {
        let mut id = base.clone();
        let mut n = 2;
        while !ids.insert(id.clone()) {
            id = format!("{base}-{n}");
            n += 1;
        }
        id
    };
    let mut positives = 0usize;
    let mut body = String::new();

    for (table, tc) in &changes {
        let Some(info) = world.table(table) else {
            continue;
        };
        let key_col = info.key_column.clone();
        let target = |key: &str| match &key_col {
            Some(k) => format!("{} = {}", ident(k), sql_str(key)),
            None => format!(
                "rowid = {}",
                key.parse::<i64>()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| sql_str(key))
            ),
        };
        let select = match &info.document_column {
            Some(doc) => ident(doc),
            None => {
                let mut cols = table_columns(episode, table)?;
                if cols.is_empty() {
                    // The sandbox refused the pragma and the seed has no row
                    // to read names from (a table only gold adds to): the
                    // changed records name the columns.
                    cols = tc
                        .added
                        .values()
                        .chain(tc.changed.values())
                        .find_map(Value::as_object)
                        .map(|o| o.keys().cloned().collect())
                        .unwrap_or_default();
                }
                format!(
                    "json_object({})",
                    cols.iter()
                        .map(|c| format!("{}, {}", sql_str(c), ident(c)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        };
        for (key, record) in tc.added.iter().chain(tc.changed.iter()) {
            let added = tc.added.contains_key(key);
            let query = format!(
                "SELECT {select} FROM {} WHERE {}",
                ident(table),
                target(key)
            );
            let old = if added {
                None
            } else {
                episode
                    .query(&query, &Map::new())?
                    .first()
                    .and_then(|row| row.values().next().cloned())
                    .map(|v| match v {
                        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
                        other => other,
                    })
            };
            let id = unique(format!("{}-{}", slug(table), slug(key)));
            let fields = changed_fields(old.as_ref(), record, &written)
                .filter(|f| !already_so(old.as_ref(), f));
            if fields.is_none() && !added && info.document_column.is_none() {
                // Only open fields changed; a timestamp gold set where there
                // was none (`used_at`) still says the change happened.
                for field in timestamps_set(old.as_ref(), record) {
                    let id = unique(format!(
                        "{}-{}-{}-set",
                        slug(table),
                        slug(key),
                        slug(&field)
                    ));
                    body.push_str(&format!(
                        "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"state\"\nquery = {}\nexpect = {{ null = false }}\npoints = 1\n",
                        q(&id),
                        q(&format!("{} {key} gets a {field}, as in the gold run (its time is left open).", singular(table))),
                        q(&format!("SELECT {} FROM {} WHERE {}", ident(&field), ident(table), target(key))),
                    ));
                    positives += 1;
                }
            }
            match fields {
                Some(fields) => {
                    let names: Vec<&String> = fields
                        .as_object()
                        .map(|o| o.keys().collect())
                        .unwrap_or_default();
                    let verb = if added {
                        "is created with"
                    } else {
                        "ends with"
                    };
                    body.push_str(&format!(
                        "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"state\"\nquery = {}\nexpect = {{ json_includes = {} }}\npoints = 1\n",
                        q(&id),
                        q(&format!(
                            "{} {key} {verb} the gold run's {} (typed; free text and timestamps left open).",
                            singular(table),
                            names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", ")
                        )),
                        q(&query),
                        q(&serde_json::to_string(&fields).unwrap_or_default()),
                    ));
                    positives += 1;
                }
                None if added => {
                    body.push_str(&format!(
                        "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"state\"\nquery = {}\nexpect = {{ rows = 1 }}\npoints = 1\n",
                        q(&id),
                        q(&format!("{} {key} is created, as in the gold run.", singular(table))),
                        q(&format!("SELECT 1 FROM {} WHERE {}", ident(table), target(key))),
                    ));
                    positives += 1;
                }
                // Only free text or timestamps changed: nothing to pin.
                None => {}
            }
            if info.document_column.is_none() {
                for (field, values) in free_text_values(old.as_ref(), record) {
                    let id = unique(format!(
                        "{}-{}-{}-values",
                        slug(table),
                        slug(key),
                        slug(&field)
                    ));
                    let checks: Vec<String> = values
                        .iter()
                        .map(|v| format!("instr({}, {}) > 0", ident(&field), sql_str(v)))
                        .collect();
                    body.push_str(&format!(
                        "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"state\"\nquery = {}\nexpect = {{ equals = 1 }}\npoints = 1\n",
                        q(&id),
                        q(&format!(
                            "{} {key}'s {field} mentions {} (the amounts and ids the gold run wrote there; its wording is left open).",
                            singular(table),
                            values.join(", ")
                        )),
                        q(&format!(
                            "SELECT {} FROM {} WHERE {}",
                            checks.join(" AND "),
                            ident(table),
                            target(key)
                        )),
                    ));
                    positives += 1;
                }
            }
        }
        for key in &tc.removed {
            let key = key
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| key.to_string());
            let id = unique(format!("{}-{}-removed", slug(table), slug(&key)));
            body.push_str(&format!(
                "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"state\"\nquery = {}\nexpect = {{ rows = 0 }}\npoints = 1\n",
                q(&id),
                q(&format!("{} {key} is removed, as in the gold run.", singular(table))),
                q(&format!("SELECT 1 FROM {} WHERE {}", ident(table), target(&key))),
            ));
            positives += 1;
        }
    }

    let forbidden = match find_forbidden(world, episode, task, &gold, &gold_set, templates)? {
        Some(found) => Some(found),
        None => find_repeated_write(world, episode, task, &gold, &gold_set)?,
    };
    // "Nothing else changed" can only tell runs apart when some run
    // changes something else: gold does, or a forbidden write does.
    if gate && (!gold_set.is_empty() || forbidden.is_some()) {
        let only: Vec<String> = gold_set
            .iter()
            .map(|(t, k)| format!("{{ table = {}, key = {} }}", q(t), q(k)))
            .collect();
        body.push_str(&format!(
            "\n[[criteria]]\nid = \"nothing-else-changed\"\ndescription = {}\nkind = \"state\"\nchanges = {{ {} }}\ngate = true\n",
            q(if gold_set.is_empty() {
                "Nothing in the world changed, as in the gold run."
            } else {
                "No record changed other than the ones the gold run changes."
            }),
            if only.is_empty() { "none = true".to_string() } else { format!("only = [{}]", only.join(", ")) },
        ));
    } else if gate {
        notes.push("No write was found that changes a record gold leaves alone, so there is no \"nothing else changed\" gate (it could not tell any run apart).");
    } else {
        notes.push("No run lint tries (gold, doing nothing, a mutant of gold) and no write derive tried changes a record gold leaves alone (the world's guards refuse them), so there is no \"nothing else changed\" gate: it could not tell any run apart. Add one with a [[forbidden]] run that it catches.");
    }

    let outputs: Vec<&String> = task.outputs.iter().collect();
    for (i, output) in outputs.iter().enumerate() {
        let id = unique(format!("output-{}", i + 1));
        let date = super::values::dates_in(output)
            .into_iter()
            .find(|(_, start, end)| *start == 0 && *end == output.len())
            .map(|(d, _, _)| d);
        let (field, value) = match (date, super::numbers::parse_number(output)) {
            (Some(d), _) => ("date", q(&d.to_string())),
            (None, Some(_)) => ("number", q(output)),
            (None, None) => ("contains", q(output)),
        };
        let allow = context_values(output, &task.outputs, &said);
        body.push_str(&format!(
            "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"message\"\n{field} = {value}\n{}points = 1\n",
            q(&id),
            q(&format!("Tells the user {output}, committing to it: no competing value of its kind in what is said.")),
            if allow.is_empty() { String::new() } else { format!("allow = [{}]\n", allow.join(", ")) },
        ));
        positives += 1;
    }

    if gold_set.is_empty() {
        // Gold changes nothing, so the state cannot tell it from doing
        // nothing: grade the calls it makes (its writes, refused or not;
        // without writes, its successful look-ups). Free text is left
        // open: any wording of a summary or a reason will do.
        let is_write = |t: &str| {
            world
                .tools
                .get(t)
                .is_some_and(|x| x.kind == ToolKind::Write)
        };
        let writes = r
            .actions
            .iter()
            .any(|a| a.tool_name().is_some_and(is_write));
        let mut seen: Vec<&Action> = Vec::new();
        for (i, a) in r.actions.iter().enumerate() {
            let Action::Tool { tool, args } = a else {
                continue;
            };
            let ok = r.observations.get(i).is_some_and(|o| o.ok);
            // A look-up gold made that found nothing is not required.
            if is_write(tool) != writes || seen.contains(&a) || (!writes && !ok) {
                continue;
            }
            seen.push(a);
            let exact: Map<String, Value> = args
                .iter()
                .filter(|(_, v)| {
                    !v.as_str()
                        .is_some_and(|s| s.trim().contains(char::is_whitespace))
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let (id, description) = if writes {
                let outcome = if ok {
                    "succeeds"
                } else {
                    "is refused, as in the gold run"
                };
                (
                    format!("attempt-{}", slug(tool)),
                    format!(
                        "Makes the gold run's {tool} call with the same arguments (it {outcome})."
                    ),
                )
            } else {
                (
                    format!("looked-up-{}", slug(tool)),
                    format!(
                        "Checks the facts first, as the gold run does: {tool} {}.",
                        super::matchers::compact(&Value::Object(exact.clone()))
                    ),
                )
            };
            body.push_str(&format!(
                "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"action\"\ntool = {}\nargs = {}\n{}points = 1\n",
                q(&unique(id)),
                q(&description),
                q(tool),
                inline(&Value::Object(exact)),
                if writes { "include_failed = true\n" } else { "" },
            ));
            positives += 1;
        }
    }
    if let Some((tool, told)) = reported_write(world, task, &gold) {
        // The bounds of an answer apply (stuffing fails), widened to what
        // gold's own report needs.
        let values = told
            .iter()
            .flat_map(|m| super::values::distinct_per_kind(&super::values::stated_values(m)))
            .map(|(_, n)| n)
            .max()
            .unwrap_or(0);
        let length = told.iter().map(|m| m.chars().count()).max().unwrap_or(0);
        let max_values = values
            .saturating_add(2)
            .max(super::commit::DEFAULT_MAX_VALUES);
        let max_length = length
            .saturating_mul(2)
            .max(super::commit::DEFAULT_MAX_LENGTH);
        body.push_str(&format!(
            "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"message\"\nregex = \"\\\\S\"\nafter = {{ tool = {} }}\n{}{}points = 1\n",
            q(&unique("told-the-user".to_string())),
            q(&format!("Tells the user what was done, after {tool}, as the gold run does (a report, not a list of candidates).")),
            q(&tool),
            if max_values > super::commit::DEFAULT_MAX_VALUES { format!("max_values = {max_values}\n") } else { String::new() },
            if max_length > super::commit::DEFAULT_MAX_LENGTH { format!("max_length = {max_length}\n") } else { String::new() },
        ));
        positives += 1;
    }
    if positives == 0 {
        body.push_str("\n[[criteria]]\nid = \"replied\"\ndescription = \"Replies to the user (the bounds of an answer apply: a short message, not a list of candidates).\"\nkind = \"message\"\nregex = \"\\\\S\"\npoints = 1\n");
        positives += 1;
    }

    // What must not happen: each costs everything a run could earn.
    let penalty = -(positives as f64);
    // A repeat of gold's own call would make gold's call match too: the
    // gate alone catches it (lint's `[[forbidden]]` run shows it does).
    let repeats_gold = forbidden.as_ref().is_some_and(|(a, _)| gold.contains(a));
    if let Some((Action::Tool { tool, args }, changed)) =
        forbidden.as_ref().filter(|_| !repeats_gold)
    {
        let keys: Map<String, Value> = args
            .iter()
            .filter(|(_, v)| v.as_str().is_some_and(|s| !s.contains(char::is_whitespace)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        body.push_str(&format!(
            "\n[[criteria]]\nid = {}\ndescription = {}\nkind = \"action\"\ntool = {}\nargs = {}\npoints = {penalty}\n",
            q(&unique(format!("forbidden-{}", slug(tool)))),
            q(&format!("Made, or tried to make (a refusal does not excuse it), the {tool} call that changes {changed}, which the task does not ask for.")),
            q(tool),
            inline(&Value::Object(keys)),
        ));
    }
    let has_subject = world
        .scope
        .as_ref()
        .is_some_and(|s| task.records.iter().any(|r| r.table == s.subject));
    if let Some(scope) = world.scope.as_ref().filter(|_| has_subject) {
        body.push_str(&format!(
            "\n[[criteria]]\nid = \"outside-subject-writes\"\ndescription = {}\nkind = \"scope\"\ncheck = \"writes\"\npoints = {penalty}\n",
            q(&format!("Wrote to, or tried to write to, a record outside the task's {} and what reaches it.", singular(&scope.subject).to_lowercase())),
        ));
        if !scope.sensitive.is_empty() {
            body.push_str(&format!(
                "\n[[criteria]]\nid = \"disclosed-outside-subject\"\ndescription = {}\nkind = \"scope\"\ncheck = \"disclosure\"\npoints = {penalty}\n",
                q(&format!("Told the user a sensitive detail ({}) of someone other than the task's {}.", scope.sensitive.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(", "), singular(&scope.subject).to_lowercase())),
            ));
        }
    }

    let mut gold_runs = String::new();
    if needs_gold {
        if !kept_gold.is_empty() {
            gold_runs.push_str(kept_gold);
        } else if !task.outputs.is_empty() {
            let mut actions: Vec<Value> = gold.iter().map(Action::to_json).collect();
            let reply = Action::message(format!(
                "Here is what you asked for: {}.",
                task.outputs.join("; ")
            ))
            .to_json();
            let at = super::mutations::insertion_point(world, &gold);
            actions.insert(at, reply);
            gold_runs.push_str(&format!(
                "\n[[gold]]\nwhy = \"The reference solution, plus a reply that says the required outputs (the solution's own messages do not).\"\nactions = [\n{}\n]\n",
                actions.iter().map(|a| format!("  {},", inline(a))).collect::<Vec<_>>().join("\n")
            ));
        } else {
            notes.push("Add a [[gold]] run: the solution is empty, and a rubric is checked against a run that earns full marks.");
        }
    }
    if !notes.is_empty() {
        out.push_str(&format!("notes = {}\n", q(&notes.join(" "))));
    }
    if needs_gold && !gold_runs.is_empty() {
        out.push_str("solution_is_gold = false\n");
    }
    out.push_str(&body);
    out.push_str(&gold_runs);

    if let Some((Action::Tool { tool, args }, changed)) = forbidden {
        out.push_str(&format!(
            "\n[[forbidden]]\ntool = {}\nargs = {}\nwhy = {}\n",
            q(&tool),
            inline(&Value::Object(args)),
            q(&format!(
                "changes {changed}, which the task does not ask for"
            )),
        ));
    }
    Ok(out)
}

/// Whether every field of `fields` already has that value in `old`: a
/// criterion on them is met before anything happens (the ids a write
/// names on a record whose only change is a timestamp).
fn already_so(old: Option<&Value>, fields: &Value) -> bool {
    match (old.and_then(Value::as_object), fields.as_object()) {
        (Some(o), Some(f)) => f.iter().all(|(k, v)| o.get(k) == Some(v)),
        _ => false,
    }
}

/// The timestamp fields of `new` that were NULL in `old`.
fn timestamps_set(old: Option<&Value>, new: &Value) -> Vec<String> {
    let (Some(o), Some(n)) = (old.and_then(Value::as_object), new.as_object()) else {
        return Vec::new();
    };
    n.iter()
        .filter(|(k, v)| {
            v.as_str().is_some_and(is_timestamp) && o.get(k.as_str()).is_some_and(Value::is_null)
        })
        .map(|(k, _)| k.clone())
        .collect()
}

/// The figures in each free-text field gold wrote (a resolution "refunded
/// $79.00 on INV-24073"), by field: amounts, ids, dates as gold wrote
/// them, email addresses, and counts that are not small whole numbers
/// ("clause 13.1", "78%", "24 hours"). Wording is left open, but a note
/// that drops the figures it should carry is not what gold did. Small
/// counts are left out: they are written too many ways.
fn free_text_values(old: Option<&Value>, new: &Value) -> Vec<(String, Vec<String>)> {
    use super::values::{stated_values, ValueKey, ValueKind};
    let Some(fields) = new.as_object() else {
        return Vec::new();
    };
    let before = old.and_then(Value::as_object);
    let mut out = Vec::new();
    for (field, value) in fields {
        let Some(text) = value.as_str().filter(|t| is_free_text(t)) else {
            continue;
        };
        if before.and_then(|b| b.get(field)) == Some(value) {
            continue;
        }
        let mut values: Vec<String> = Vec::new();
        let figures = stated_values(text).into_iter().filter_map(|v| {
            let pinned = match (&v.kind, &v.key) {
                (ValueKind::Money | ValueKind::Id(_) | ValueKind::Date, _) => true,
                (ValueKind::Count, ValueKey::Number(n)) => n.fract() != 0.0 || n.abs() >= 10.0,
                _ => false,
            };
            pinned.then(|| v.text.trim_start_matches(['$', '€', '£', ' ']).to_string())
        });
        let emails = email_regex()
            .find_iter(text)
            .map(|m| m.as_str().to_string());
        for shown in figures.chain(emails) {
            if !shown.is_empty() && !values.contains(&shown) {
                values.push(shown);
            }
        }
        if !values.is_empty() {
            out.push((field.clone(), values));
        }
    }
    out
}

/// The write tool after whose last call gold tells the user what it did,
/// and what it says then, when the task has no outputs to check that
/// message by: without a criterion on it, a run that acts and never says
/// so matches gold.
fn reported_write(world: &World, task: &Task, gold: &[Action]) -> Option<(String, Vec<String>)> {
    if !task.outputs.is_empty() {
        return None;
    }
    let last_write = gold.iter().rposition(
        |a| matches!(a, Action::Tool { tool, .. } if super::mutations::is_write(world, tool)),
    )?;
    let told: Vec<String> = gold[last_write..]
        .iter()
        .filter_map(|a| match a {
            Action::Message { message } if !message.trim().is_empty() => Some(message.clone()),
            _ => None,
        })
        .collect();
    match &gold[last_write] {
        Action::Tool { tool, .. } if !told.is_empty() => Some((tool.clone(), told)),
        _ => None,
    }
}

/// An email address, as written in a note.
fn email_regex() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
            .expect("a valid pattern")
    })
}

/// The values of `output`'s kind that gold's messages state besides the
/// task's outputs (the list price beside a prorated charge), as TOML
/// `allow` entries: gold says them, so they are context, not competing
/// answers. Wrong candidates an agent adds still compete.
fn context_values(output: &str, outputs: &[String], said: &[String]) -> Vec<String> {
    use super::values::{stated_values, ValueKey};
    let whole = |text: &str| {
        stated_values(text)
            .into_iter()
            .find(|v| v.start == 0 && v.end == text.trim_end().len())
    };
    let Some(answer) = whole(output.trim()) else {
        return Vec::new();
    };
    let answers: Vec<ValueKey> = outputs
        .iter()
        .filter_map(|o| whole(o.trim()).map(|v| v.key))
        .collect();
    let stated: Vec<_> = said.iter().flat_map(|m| stated_values(m)).collect();
    // The answer's kind is how gold writes it: "4,789" in the task may be
    // "$4,789" (money) in gold's message.
    let mut kinds: Vec<_> = stated
        .iter()
        .filter(|v| answer.key.same(&v.key))
        .map(|v| v.kind.clone())
        .collect();
    if kinds.is_empty() {
        kinds.push(answer.kind);
    }
    let mut seen: Vec<ValueKey> = Vec::new();
    let mut out = Vec::new();
    for v in stated {
        if !kinds.contains(&v.kind)
            || answers.iter().any(|a| a.same(&v.key))
            || seen.iter().any(|k| k.same(&v.key))
        {
            continue;
        }
        out.push(match &v.key {
            ValueKey::Number(n) if n.fract() == 0.0 => format!("{n:.1}"),
            ValueKey::Number(n) => format!("{n}"),
            ValueKey::Date(d) => q(&d.to_string()),
            ValueKey::Text(_) => q(&v.text),
        });
        seen.push(v.key);
    }
    out
}

pub(super) fn table_columns(episode: &Episode, table: &str) -> Result<Vec<String>> {
    let rows = episode.query(
        &format!("SELECT name FROM pragma_table_info({})", sql_str(table)),
        &Map::new(),
    );
    match rows {
        Ok(rows) => Ok(rows
            .iter()
            .filter_map(|r| r.get("name").and_then(Value::as_str).map(str::to_string))
            .collect()),
        // Some sandboxes refuse pragma functions: fall back to a row's keys.
        Err(_) => {
            let rows = episode.query(
                &format!("SELECT * FROM {} LIMIT 1", ident(table)),
                &Map::new(),
            )?;
            Ok(rows
                .first()
                .map(|r| r.keys().cloned().collect())
                .unwrap_or_default())
        }
    }
}

/// When no retargeted write is found: one of gold's own writes made a
/// second time (a double posting), if it succeeds and changes a record
/// gold leaves alone. It gives the "nothing else changed" gate a run it
/// must catch, so the gate is not constant.
fn find_repeated_write(
    world: &Arc<World>,
    episode: &mut Episode,
    task: &Task,
    gold: &[Action],
    gold_set: &Touched,
) -> Result<Option<(Action, String)>> {
    let at = super::mutations::insertion_point(world, gold);
    let writes = gold[..at].iter().rev().filter(|a| {
        a.tool_name()
            .is_some_and(|t| super::mutations::is_write(world, t))
    });
    for call in writes.take(MAX_TRIES) {
        if let Some(found) = changes_elsewhere(episode, task, gold, at, call, gold_set)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Gold with `call` made at `at`: when the call succeeds and the run ends
/// with a record changed that gold leaves alone, the call and that record.
fn changes_elsewhere(
    episode: &mut Episode,
    task: &Task,
    gold: &[Action],
    at: usize,
    call: &Action,
    gold_set: &Touched,
) -> Result<Option<(Action, String)>> {
    let mut actions = gold.to_vec();
    actions.insert(at, call.clone());
    let r = replay(episode, &task.id, 0, &actions)?;
    if r.ignored > 0 || !r.observations.get(at).is_some_and(|o| o.ok) {
        return Ok(None);
    }
    let after = touched(&episode.changes()?);
    Ok(after
        .difference(gold_set)
        .next()
        .map(|(t, k)| (call.clone(), format!("{} {k}", singular(t)))))
}

/// A write that succeeds after the gold run and changes a record gold does
/// not touch, with the record it changed.
fn find_forbidden(
    world: &Arc<World>,
    episode: &mut Episode,
    task: &Task,
    gold: &[Action],
    gold_set: &Touched,
    templates: &[Action],
) -> Result<Option<(Action, String)>> {
    let keyed: Vec<(&str, &str)> = world
        .tables
        .iter()
        .filter_map(|t| t.key_column.as_deref().map(|k| (t.name.as_str(), k)))
        .collect();
    // Values that name this task's records: the task's own, and gold's
    // arguments that are record keys.
    let mut related: Vec<String> = task
        .records
        .iter()
        .filter_map(|r| r.key.as_str().map(str::to_string))
        .collect();
    let mut calls: Vec<&Action> = gold
        .iter()
        .filter(|a| {
            a.tool_name().is_some_and(|t| {
                world
                    .tools
                    .get(t)
                    .is_some_and(|x| x.kind == ToolKind::Write)
            })
        })
        .collect();
    calls.extend(templates.iter());
    let mut table_of: HashMap<String, Option<&str>> = HashMap::new();
    let mut lookup = |episode: &Episode, v: &str| -> Option<&str> {
        if let Some(t) = table_of.get(v) {
            return *t;
        }
        let found = keyed.iter().find(|(t, k)| {
            episode
                .query(
                    &format!(
                        "SELECT 1 FROM {} WHERE {} = {} LIMIT 1",
                        ident(t),
                        ident(k),
                        sql_str(v)
                    ),
                    &Map::new(),
                )
                .is_ok_and(|r| !r.is_empty())
        });
        let t = found.map(|(t, _)| *t);
        table_of.insert(v.to_string(), t);
        t
    };
    // Bring the seeded state back for lookups.
    episode.reset(&task.id, 0)?;
    for a in gold {
        if let Action::Tool { args, .. } = a {
            for v in args.values().filter_map(Value::as_str) {
                if lookup(episode, v).is_some() && !related.iter().any(|r| r == v) {
                    related.push(v.to_string());
                }
            }
        }
    }
    let mut tries = 0;
    for call in calls {
        let Action::Tool { tool, args } = call else {
            continue;
        };
        for (name, value) in args {
            let Some(v) = value.as_str() else { continue };
            episode.reset(&task.id, 0)?;
            let Some(table) = lookup(episode, v) else {
                continue;
            };
            let Some(info) = world.table(table) else {
                continue;
            };
            let key_col = info.key_column.clone().unwrap_or_else(|| "rowid".into());
            let text_col = info
                .document_column
                .clone()
                .unwrap_or_else(|| key_col.clone());
            let mut candidates: Vec<String> = Vec::new();
            // Records that mention this task's records first (another order
            // of the same customer), then the table's first records.
            let mut queries: Vec<String> = related
                .iter()
                .map(|rel| {
                    format!(
                        "SELECT {k} AS k FROM {t} WHERE instr({c}, {r}) > 0 ORDER BY rowid LIMIT 8",
                        k = ident(&key_col),
                        t = ident(table),
                        c = ident(&text_col),
                        r = sql_str(rel)
                    )
                })
                .collect();
            queries.push(format!(
                "SELECT {k} AS k FROM {t} ORDER BY rowid LIMIT 12",
                k = ident(&key_col),
                t = ident(table)
            ));
            for sql in &queries {
                for row in episode.query(sql, &Map::new()).unwrap_or_default() {
                    if let Some(k) = row.get("k").and_then(Value::as_str) {
                        if k != v
                            && !gold_set.contains(&(table.to_string(), k.to_string()))
                            && !candidates.iter().any(|c| c == k)
                        {
                            candidates.push(k.to_string());
                        }
                    }
                }
            }
            for cand in candidates {
                if tries >= MAX_TRIES {
                    return Ok(None);
                }
                tries += 1;
                let mut new_args = args.clone();
                new_args.insert(name.clone(), Value::String(cand.clone()));
                let candidate = Action::Tool {
                    tool: tool.clone(),
                    args: new_args,
                };
                // Before a final step that ends the episode, as lint does.
                let at = match gold.last() {
                    Some(Action::Tool { tool: t, .. })
                        if world.tools.get(t).is_some_and(|x| x.ends_episode) =>
                    {
                        gold.len() - 1
                    }
                    _ => gold.len(),
                };
                if let Some(found) =
                    changes_elsewhere(episode, task, gold, at, &candidate, gold_set)?
                {
                    return Ok(Some(found));
                }
            }
        }
    }
    Ok(None)
}

/// A TOML basic string.
pub(super) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

pub(super) fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

pub(super) fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "x".into()
    } else {
        out
    }
}

pub(super) fn singular(table: &str) -> String {
    // `leave_requests` reads "Leave request", not "Leave_request".
    let t = table.strip_suffix('s').unwrap_or(table).replace('_', " ");
    let mut c = t.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => table.to_string(),
    }
}

/// JSON as a TOML inline value (nulls, which TOML lacks, are left out).
pub(super) fn inline(v: &Value) -> String {
    match v {
        Value::Null => "\"\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => toml::Value::Float(f).to_string(),
            _ => n.to_string(),
        },
        Value::String(s) => q(s),
        Value::Array(a) => format!("[{}]", a.iter().map(inline).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    let key = if !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    {
                        k.clone()
                    } else {
                        q(k)
                    };
                    format!("{key} = {}", inline(v))
                })
                .collect();
            if parts.is_empty() {
                "{}".into()
            } else {
                format!("{{ {} }}", parts.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_renders_as_toml_inline_values_that_parse_back_typed() {
        let v = json!({"a": 1, "b": 2.0, "c": "x\"y", "d": [true, {"e": 0.1}], "weird key": 1, "n": null});
        let text = format!("v = {}", inline(&v));
        let parsed: toml::Table = toml::from_str(&text).expect("valid TOML");
        let back = super::super::matchers::toml_to_json(&parsed["v"]);
        assert_eq!(
            back,
            json!({"a": 1, "b": 2.0, "c": "x\"y", "d": [true, {"e": 0.1}], "weird key": 1})
        );
        assert_eq!(slug("#W6067464"), "w6067464");
        assert_eq!(singular("orders"), "Order");
        assert_eq!(singular("leave_requests"), "Leave request");
    }
}
