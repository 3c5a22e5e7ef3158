//! A rubric as an editor holds it, and the one canonical way it is
//! written back to a file.
//!
//! The app edits a [`RubricDoc`]: the file's fields, each criterion as the
//! fields an author would write (`kind`, `tool`, `args`, `points`, …) in
//! JSON. [`RubricDoc::to_toml`] writes it in a fixed layout — one field
//! per line, fields in the order `docs/rubrics.md` lists them — so the
//! same rubric always gives the same bytes (and content hash), and a
//! problem the loader reports on a line can be pinned to the criterion and
//! field on that line ([`check`]). Saving writes only a rubric that
//! compiles: nothing is written half-way ([`save`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::derive::{inline, q};
use super::matchers::toml_to_json;
use super::{sentence, CriterionKind, Rubric, RUBRICS_DIR};
use crate::action::Action;
use crate::error::{Error, Result};
use crate::world::{Diagnostic, World};

/// The fields of one criterion, section, forbidden action or gold run.
pub type Fields = Map<String, Value>;

/// A rubric being edited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RubricDoc {
    /// The task the rubric grades; the file is saved as `<task>.toml`.
    pub task: String,
    /// The rubric's `version` as text ("1" when the file gives none); bump it
    /// when a criterion changes meaning.
    pub version: String,
    /// A short name for people; left out of the file when blank.
    #[serde(default)]
    pub title: String,
    /// Notes for annotators; left out of the file when blank.
    #[serde(default)]
    pub notes: String,
    /// Whether the task's reference solution must score 1.0 in lint; `false`
    /// needs at least one `gold` run.
    #[serde(default = "yes")]
    pub solution_is_gold: bool,
    /// The comment lines at the top of the file (kept as they are).
    #[serde(default)]
    pub header: String,
    /// Each `[[sections]]` table, its fields as written (`id`, `title`,
    /// `weight`, `parent`).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "Array<Record<string, unknown>>"))]
    pub sections: Vec<Fields>,
    /// Each `[[criteria]]` table, its fields as an author writes them (`id`,
    /// `kind`, `tool`, `args`, `points`, …). A blank `description` is filled
    /// with the criterion's sentence when the rubric is checked or saved.
    #[cfg_attr(feature = "ts", ts(type = "Array<Record<string, unknown>>"))]
    pub criteria: Vec<Fields>,
    /// Each `[[forbidden]]` table: `tool` and `args`, or `message`; and `why`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "Array<Record<string, unknown>>"))]
    pub forbidden: Vec<Fields>,
    /// Each `[[gold]]` run: `why` and `actions`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "Array<Record<string, unknown>>"))]
    pub gold: Vec<Fields>,
}

fn yes() -> bool {
    true
}

/// A problem with the rubric being edited, where the editor shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DocProblem {
    /// The criterion (0-based position in `criteria`), when it is one's.
    pub criterion: Option<u32>,
    /// The field of that criterion, when the problem is about one.
    pub field: Option<String>,
    /// What is wrong, in plain words.
    pub message: String,
}

/// What checking a rubric being edited found.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Checked {
    /// One sentence per criterion, in order (also for ones with problems).
    pub sentences: Vec<String>,
    /// Every problem the loader found, placed at its criterion and field; empty
    /// when the rubric compiles (only then can it be saved).
    pub problems: Vec<DocProblem>,
    /// The canonical file text, and the SHA-256 of its bytes.
    pub toml: String,
    /// SHA-256 of the bytes of `toml`: the hash scores record once it is saved.
    pub hash: String,
}

/// Criterion keys in the order the file lists them: the common ones, each
/// kind's own fields (as the kinds declare them), then the scoring ones.
/// Any other key comes after them (and is then refused by the loader as
/// unknown).
fn criterion_order() -> &'static [&'static str] {
    static ORDER: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ORDER.get_or_init(|| {
        let kinds = [
            CriterionKind::State,
            CriterionKind::Action,
            CriterionKind::Message,
            CriterionKind::Scope,
            CriterionKind::Judged,
        ];
        let mut order = vec!["id", "description", "kind"];
        for key in kinds.iter().flat_map(|k| k.fields()) {
            if !order.contains(key) {
                order.push(key);
            }
        }
        order.extend(["points", "gate", "required", "section"]);
        order
    })
}
const SECTION_ORDER: &[&str] = &["id", "title", "weight", "parent"];
const FORBIDDEN_ORDER: &[&str] = &["tool", "args", "message", "why"];

/// Where each line of the canonical text came from.
#[derive(Debug, Default)]
struct Layout {
    /// 1-based line → (criterion, field); `None` field for `[[criteria]]`.
    lines: Vec<(usize, usize, Option<String>)>,
}

impl Layout {
    fn at(&self, line: usize) -> Option<(usize, Option<String>)> {
        self.lines
            .iter()
            .find(|(l, _, _)| *l == line)
            .map(|(_, c, f)| (*c, f.clone()))
    }
}

impl RubricDoc {
    /// An empty rubric for `task_id`, to start from.
    pub fn new(task_id: &str, title: &str) -> RubricDoc {
        RubricDoc {
            task: task_id.to_string(),
            version: "1".into(),
            title: title.to_string(),
            notes: String::new(),
            solution_is_gold: true,
            header: String::new(),
            sections: Vec::new(),
            criteria: Vec::new(),
            forbidden: Vec::new(),
            gold: Vec::new(),
        }
    }

    /// Reads rubric file text (`source` names it in errors). Only the
    /// syntax is read here; what the fields mean is checked by [`check`].
    pub fn parse(task_id: &str, source: &str, text: &str) -> Result<RubricDoc> {
        let table: toml::Table = toml::from_str(text).map_err(|e| Error::RubricInvalid {
            path: source.to_string(),
            problems: vec![Diagnostic {
                file: source.to_string(),
                line: e
                    .span()
                    .map(|s| text[..s.start.min(text.len())].lines().count().max(1)),
                subject: None,
                message: format!("not a valid rubric file: {}", e.message()),
            }],
        })?;
        let string = |k: &str| {
            table
                .get(k)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let list = |k: &str| -> Vec<Fields> {
            table
                .get(k)
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
                .filter_map(|v| match toml_to_json(v) {
                    Value::Object(m) => Some(m),
                    _ => None,
                })
                .collect()
        };
        let header: String = text
            .lines()
            .take_while(|l| l.trim_start().starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        Ok(RubricDoc {
            task: table
                .get("task")
                .and_then(|v| v.as_str())
                .unwrap_or(task_id)
                .to_string(),
            version: match table.get("version") {
                Some(toml::Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => "1".into(),
            },
            title: string("title"),
            notes: string("notes"),
            solution_is_gold: table
                .get("solution_is_gold")
                .and_then(|v| v.as_bool())
                .unwrap_or(true),
            header,
            sections: list("sections"),
            criteria: list("criteria"),
            forbidden: list("forbidden"),
            gold: list("gold"),
        })
    }

    /// The canonical file text.
    pub fn to_toml(&self) -> String {
        self.render().0
    }

    fn render(&self) -> (String, Layout) {
        let mut out = String::new();
        let mut layout = Layout::default();
        for line in self.header.lines() {
            let line = line.trim_end();
            if line.starts_with('#') {
                out.push_str(line);
                out.push('\n');
            }
        }
        out.push_str(&format!("format = {}\n", super::FORMAT));
        out.push_str(&format!("task = {}\n", q(&self.task)));
        out.push_str(&format!("version = {}\n", q(&self.version)));
        if !self.title.trim().is_empty() {
            out.push_str(&format!("title = {}\n", q(self.title.trim())));
        }
        if !self.notes.trim().is_empty() {
            out.push_str(&format!("notes = {}\n", q(self.notes.trim())));
        }
        if !self.solution_is_gold {
            out.push_str("solution_is_gold = false\n");
        }
        for s in &self.sections {
            out.push_str("\n[[sections]]\n");
            push_fields(&mut out, s, SECTION_ORDER, |_, _| {});
        }
        for (i, c) in self.criteria.iter().enumerate() {
            out.push_str("\n[[criteria]]\n");
            layout.lines.push((out.lines().count(), i, None));
            push_fields(&mut out, c, criterion_order(), |line, key| {
                layout.lines.push((line, i, Some(key.to_string())));
            });
        }
        for f in &self.forbidden {
            out.push_str("\n[[forbidden]]\n");
            push_fields(&mut out, f, FORBIDDEN_ORDER, |_, _| {});
        }
        for g in &self.gold {
            out.push_str("\n[[gold]]\n");
            if let Some(why) = g.get("why").and_then(Value::as_str) {
                out.push_str(&format!("why = {}\n", q(why)));
            }
            let actions: Vec<String> = g
                .get("actions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|a| format!("  {},\n", inline(a)))
                .collect();
            out.push_str(&format!("actions = [\n{}]\n", actions.concat()));
        }
        (out, layout)
    }
}

/// Writes `fields` one per line, known keys first in `order`; `at(line,
/// key)` learns the 1-based line of each.
fn push_fields(out: &mut String, fields: &Fields, order: &[&str], mut at: impl FnMut(usize, &str)) {
    let known = order.iter().filter_map(|k| fields.get_key_value(*k));
    let rest = fields.iter().filter(|(k, _)| !order.contains(&k.as_str()));
    for (key, value) in known.chain(rest) {
        if skip(key, value) {
            continue;
        }
        let name = if key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !key.is_empty()
        {
            key.clone()
        } else {
            q(key)
        };
        out.push_str(&format!("{name} = {}\n", inline(value)));
        at(out.lines().count(), key);
    }
}

/// Empty values and defaults are left out, so an editor's blank field and
/// an author's missing one write the same file.
fn skip(key: &str, value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty() && key != "id",
        Value::Bool(false) => key == "gate",
        Value::Bool(true) => key == "required",
        _ => false,
    }
}

/// `doc` with every criterion left without plain words given the sentence
/// built from its fields: the annotator who clears the words (or changes
/// what a drafted criterion checks) gets the new check's sentence, and the
/// file always says in words what it grades, as the loader requires.
fn described(world: &World, doc: &RubricDoc) -> RubricDoc {
    let mut doc = doc.clone();
    for c in &mut doc.criteria {
        let blank = c
            .get("description")
            .and_then(Value::as_str)
            .is_none_or(|d| d.trim().is_empty());
        if blank {
            let s = sentence::generated(world, c);
            c.insert("description".into(), Value::String(s));
        }
    }
    doc
}

/// Checks a rubric being edited against its world: the sentence of every
/// criterion, and every problem at its criterion and field. Returns the
/// compiled rubric when there is no problem.
pub fn check(world: &Arc<World>, doc: &RubricDoc) -> (Checked, Option<Rubric>) {
    let doc = &described(world, doc);
    let (text, layout) = doc.render();
    let sentences = doc
        .criteria
        .iter()
        .map(|c| sentence::sentence(world, &Value::Object(c.clone())))
        .collect();
    let source = format!("{RUBRICS_DIR}/{}.toml", doc.task);
    let mut checked = Checked {
        sentences,
        problems: Vec::new(),
        hash: hex::encode(Sha256::digest(text.as_bytes())),
        toml: text,
    };
    if world.task(&doc.task).is_none() {
        checked.problems.push(DocProblem {
            criterion: None,
            field: None,
            message: format!("there is no task \"{}\" in this world", doc.task),
        });
        return (checked, None);
    }
    match Rubric::from_str(world, &doc.task, &source, &checked.toml) {
        Ok(r) => (checked, Some(r)),
        Err(Error::RubricInvalid { problems, .. }) => {
            checked.problems = problems.iter().map(|p| place(doc, &layout, p)).collect();
            (checked, None)
        }
        Err(e) => {
            checked.problems.push(DocProblem {
                criterion: None,
                field: None,
                message: e.to_string(),
            });
            (checked, None)
        }
    }
}

/// Puts a loader problem at its criterion and field.
fn place(doc: &RubricDoc, layout: &Layout, p: &Diagnostic) -> DocProblem {
    let by_line = p.line.and_then(|l| layout.at(l));
    let by_subject = p.subject.as_deref().and_then(|s| {
        let id = s.strip_prefix("criterion `")?.strip_suffix('`')?;
        doc.criteria
            .iter()
            .position(|c| c.get("id").and_then(Value::as_str) == Some(id))
    });
    let criterion = by_line.as_ref().map(|(c, _)| *c).or(by_subject);
    let field = by_line
        .and_then(|(_, f)| f)
        .or_else(|| criterion.and_then(|c| field_named_in(&doc.criteria[c], &p.message)));
    DocProblem {
        criterion: criterion.map(|c| c as u32),
        field,
        message: plain(&p.message),
    }
}

/// The field of `c` a message is about, when it names one: `` `tool` ``,
/// "the query", "points".
fn field_named_in(c: &Fields, message: &str) -> Option<String> {
    let lower = message.to_lowercase();
    let hints: &[(&str, &str)] = &[
        ("no tool", "tool"),
        ("the query", "query"),
        ("`expect`", "expect"),
        ("parameter", "args"),
        ("argument", "args"),
        ("points", "points"),
        ("gate", "gate"),
        ("`section`", "section"),
        ("section `", "section"),
        ("kind", "kind"),
        ("id ", "id"),
    ];
    for key in criterion_order() {
        if lower.contains(&format!("`{key}`")) {
            return Some(key.to_string());
        }
    }
    hints
        .iter()
        .find(|(hint, key)| lower.contains(hint) && (c.contains_key(*key) || *key == "points"))
        .map(|(_, key)| key.to_string())
}

/// The loader's wording, made kinder where it talks like a programmer.
fn plain(message: &str) -> String {
    let m = message
        .replace(
            "the query does not run on the seeded world",
            "this check cannot be run on the world's records",
        )
        .replace("TOML", "rubric file");
    let mut chars = m.chars();
    match chars.next() {
        Some(f) => f.to_uppercase().collect::<String>() + chars.as_str(),
        None => m,
    }
}

/// A draft rubric for `task_id`, derived from `gold` (an approved run or
/// the task's solution; `from` names it in the file's header), each
/// criterion described by its sentence so the annotator reads, and can
/// rewrite, plain words instead of the derivation's wording.
pub fn draft(
    world: &Arc<World>,
    task_id: &str,
    gold: Vec<Action>,
    from: &str,
) -> Result<RubricDoc> {
    let text = super::derive::draft(world, task_id, gold)?;
    let mut doc = RubricDoc::parse(task_id, "the draft", &text)?;
    doc.header = format!("# Drafted from {from}; edit freely, then lint it.\n");
    for c in &mut doc.criteria {
        // Derive's own words stay where the sentence builder cannot read the
        // check (a query of several conditions), rather than "a custom check".
        let derived = c
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.trim().is_empty());
        if derived && !sentence::reads_fields(world, c) {
            continue;
        }
        let s = sentence::generated(world, c);
        c.insert("description".into(), Value::String(s));
    }
    Ok(doc)
}

/// A table as the state builder offers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TableColumns {
    /// The table's name, as SQL names it.
    pub name: String,
    /// The column naming a record (`id`), if the table has one.
    pub key: Option<String>,
    /// Its column names.
    pub columns: Vec<String>,
}

/// The world's tables with their columns, for building state criteria.
pub fn tables(world: &Arc<World>) -> Result<Vec<TableColumns>> {
    let episode = crate::episode::Episode::new(Arc::clone(world))?;
    world
        .tables
        .iter()
        .map(|t| {
            Ok(TableColumns {
                name: t.name.clone(),
                key: t.key_column.clone(),
                columns: super::derive::table_columns(&episode, &t.name)?,
            })
        })
        .collect()
}

/// Where a saved rubric went.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Saved {
    /// The file written: `<dir>/<task>.toml`.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub path: PathBuf,
    /// SHA-256 of the file's bytes: the hash scores record.
    pub hash: String,
    /// The rubric's `version` as saved.
    pub version: String,
}

/// Writes `doc` as `<dir>/<task>.toml` in the canonical layout, only if it
/// compiles against `world` (otherwise nothing is written and the error
/// lists every problem). The file is replaced whole: a crash leaves the
/// old one.
pub fn save(world: &Arc<World>, dir: &Path, doc: &RubricDoc) -> Result<Saved> {
    let (checked, rubric) = check(world, doc);
    if rubric.is_none() {
        let path = dir.join(format!("{}.toml", doc.task));
        return Err(Error::RubricInvalid {
            path: path.display().to_string(),
            problems: checked
                .problems
                .iter()
                .map(|p| Diagnostic {
                    file: path.display().to_string(),
                    line: None,
                    subject: p
                        .criterion
                        .and_then(|i| doc.criteria.get(i as usize))
                        .and_then(|c| c.get("id").and_then(Value::as_str))
                        .map(|id| format!("criterion `{id}`")),
                    message: p.message.clone(),
                })
                .collect(),
        });
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let path = dir.join(format!("{}.toml", doc.task));
    let tmp = path.with_extension("toml.partial");
    std::fs::write(&tmp, &checked.toml)
        .map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(&tmp, &path)
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    Ok(Saved {
        path,
        hash: checked.hash,
        version: doc.version.clone(),
    })
}

/// The rubric file of `task_id` an editor opens: the one in `overlay`
/// (edits saved from the app) when there is one, else the world's own.
/// `None` when the task has no rubric yet.
pub fn open(
    world: &World,
    overlay: Option<&Path>,
    task_id: &str,
) -> Result<Option<(PathBuf, RubricDoc)>> {
    let name = format!("{task_id}.toml");
    let candidates = overlay
        .map(|d| d.join(&name))
        .into_iter()
        .chain([world.root.join(RUBRICS_DIR).join(&name)]);
    for path in candidates {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let doc = RubricDoc::parse(task_id, &path.display().to_string(), &text)?;
                return Ok(Some((path, doc)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn desk() -> Arc<World> {
        crate::rubric::support_desk()
    }

    fn bundled(task: &str) -> (String, RubricDoc) {
        let path = desk().root.join(RUBRICS_DIR).join(format!("{task}.toml"));
        let text = std::fs::read_to_string(&path).expect("bundled rubric");
        let doc = RubricDoc::parse(task, "test", &text).expect("parses");
        (text, doc)
    }

    #[test]
    fn every_bundled_rubric_round_trips_through_the_canonical_layout() {
        let world = desk();
        for task in world.tasks.keys() {
            let (original, doc) = bundled(task);
            let text = doc.to_toml();
            // Parsing the canonical text gives the same document, and
            // writing it again gives the same bytes.
            let again = RubricDoc::parse(task, "test", &text).expect("canonical text parses");
            assert_eq!(again, doc, "{task}");
            assert_eq!(again.to_toml(), text, "{task}");
            // It compiles to the same criteria as the author's file.
            let mine = Rubric::from_str(&world, task, "a", &text).expect("compiles");
            let theirs = Rubric::from_str(&world, task, "b", &original).expect("compiles");
            let specs = |r: &Rubric| {
                r.criteria
                    .iter()
                    .map(|c| (c.id.clone(), c.spec.clone(), c.points, c.gate))
                    .collect::<Vec<_>>()
            };
            assert_eq!(specs(&mine), specs(&theirs), "{task}");
            assert_eq!(mine.forbidden.len(), theirs.forbidden.len());
            assert_eq!(mine.gold.len(), theirs.gold.len());
            assert!(text.starts_with('#'), "the header comment is kept: {task}");
        }
    }

    #[test]
    fn a_problem_is_placed_at_its_criterion_and_field() {
        let world = desk();
        let (_, mut doc) = bundled("duplicate-charge");
        doc.criteria[0].insert("query".into(), json!("SELECT count(*) FROM nowhere"));
        doc.criteria[4].insert("tool".into(), json!("teleport"));
        let (checked, rubric) = check(&world, &doc);
        assert!(rubric.is_none());
        let at = |i: u32| {
            checked
                .problems
                .iter()
                .find(|p| p.criterion == Some(i))
                .cloned()
        };
        let sql = at(0).expect("a problem on criterion 0");
        assert_eq!(sql.field.as_deref(), Some("query"));
        assert!(
            sql.message
                .starts_with("This check cannot be run on the world's records"),
            "{}",
            sql.message
        );
        assert!(sql.message.contains("nowhere"));
        let tool = at(4).expect("a problem on criterion 4");
        assert_eq!(tool.field.as_deref(), Some("tool"), "{tool:?}");
        assert!(tool.message.contains("teleport"), "{}", tool.message);
        assert_eq!(checked.sentences.len(), doc.criteria.len());
    }

    #[test]
    fn saving_writes_only_a_rubric_that_compiles() {
        let world = desk();
        let dir = tempfile::tempdir().expect("tempdir");
        let (_, mut doc) = bundled("duplicate-charge");
        doc.criteria[1].insert("points".into(), json!("many"));
        let err = save(&world, dir.path(), &doc).expect_err("does not compile");
        assert_eq!(err.code(), "rubric_invalid");
        assert!(
            !dir.path().join("duplicate-charge.toml").exists(),
            "nothing written half-way"
        );
        assert!(
            std::fs::read_dir(dir.path())
                .map(|d| d.count())
                .unwrap_or(0)
                == 0
        );

        doc.criteria[1].insert("points".into(), json!(2));
        let saved = save(&world, dir.path(), &doc).expect("saves");
        let bytes = std::fs::read(&saved.path).expect("written");
        assert_eq!(saved.hash, hex::encode(Sha256::digest(&bytes)));
        // The overlay shadows the world's file.
        let (path, opened) = open(&world, Some(dir.path()), "duplicate-charge")
            .expect("opens")
            .expect("exists");
        assert_eq!(path, saved.path);
        assert_eq!(opened.criteria[1].get("points"), Some(&json!(2)));
        let (path, _) = open(&world, None, "duplicate-charge")
            .expect("opens")
            .expect("exists");
        assert!(path.starts_with(&world.root));
        assert!(open(&world, Some(dir.path()), "no-such-task")
            .expect("reads")
            .is_none());
    }

    #[test]
    fn a_saved_rubric_is_what_the_command_lines_loader_reads_and_lint_agrees() {
        use crate::rubric::lint::{lint, lint_rubric, LintOptions};
        use crate::rubric::RubricSet;
        let world = desk();
        let dir = tempfile::tempdir().expect("tempdir");
        let (_, mut doc) = bundled("duplicate-charge");
        doc.version = "2".into();
        doc.criteria
            .retain(|c| c.get("id").and_then(Value::as_str) != Some("told-timing"));
        let saved = save(&world, dir.path(), &doc).expect("saves");
        // `understudy rubric lint --rubrics DIR` loads the world's rubrics
        // with the saved one in place of the world's own.
        let set = RubricSet::load_with_overlay(&world, Some(dir.path())).expect("loads");
        let loaded = set.get("duplicate-charge").expect("the saved rubric");
        assert_eq!(loaded.hash, saved.hash);
        assert_eq!(loaded.version, "2");
        assert!(loaded.criterion("told-timing").is_none());
        assert_eq!(
            set.rubrics.len(),
            RubricSet::load(&world).expect("loads").rubrics.len()
        );
        let options = LintOptions {
            task: Some("duplicate-charge".into()),
            ..LintOptions::default()
        };
        let cli = lint(&world, &set, None, &options, &|| {}).expect("lints");
        let app = lint_rubric(&world, Arc::clone(loaded), None, &options, &|_| {}).expect("lints");
        let summary = |t: &crate::rubric::lint::TaskLint| {
            (
                t.ok,
                t.mutation.total,
                t.mutation.caught,
                t.problems.clone(),
                t.mutants
                    .iter()
                    .map(|m| (m.id.clone(), m.caught))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(summary(&cli.tasks[0]), summary(&app));
        // A folder that is not there is an error naming it, not an empty overlay.
        let err = RubricSet::load_with_overlay(&world, Some(&dir.path().join("missing")))
            .expect_err("no folder");
        assert!(err.to_string().contains("missing"), "{err}");
    }

    #[test]
    fn a_file_that_is_not_toml_is_refused_with_its_line() {
        let err =
            RubricDoc::parse("t", "rubrics/t.toml", "format = 1\nversion = \n").expect_err("bad");
        match err {
            Error::RubricInvalid { problems, .. } => {
                assert_eq!(problems[0].line, Some(2), "{problems:?}");
                assert!(problems[0].message.starts_with("not a valid rubric file"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_draft_from_the_solution_compiles_and_reads_as_sentences() {
        let world = desk();
        let task = world.task("duplicate-charge").expect("task");
        let gold = crate::rubric::derive::solution(task).expect("solution");
        let doc = draft(
            &world,
            "duplicate-charge",
            gold,
            "the task's reference solution",
        )
        .expect("drafts");
        assert!(doc.header.contains("reference solution"));
        let (checked, rubric) = check(&world, &doc);
        assert!(rubric.is_some(), "{:?}", checked.problems);
        assert!(!checked.sentences.is_empty());
        for (s, c) in checked.sentences.iter().zip(&doc.criteria) {
            assert!(!s.contains("SELECT"), "{s}");
            // A check the builder cannot read keeps derive's plain words.
            assert!(!s.contains("custom check"), "{s}");
            assert_eq!(
                Some(s.as_str()),
                c.get("description").and_then(Value::as_str)
            );
        }
        assert!(
            checked
                .sentences
                .iter()
                .any(|s| s == "Nothing about another customer is disclosed"),
            "{:#?}",
            checked.sentences
        );
        let tables = tables(&world).expect("tables");
        let invoices = tables
            .iter()
            .find(|t| t.name == "invoices")
            .expect("invoices");
        assert_eq!(invoices.key.as_deref(), Some("id"));
        assert!(invoices.columns.iter().any(|c| c == "refunded_cents"));
    }

    #[test]
    fn a_criterion_without_plain_words_is_checked_and_saved_with_its_sentence() {
        let world = Arc::new(
            World::load(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("fixtures/worlds/support-desk"),
            )
            .expect("support-desk loads"),
        );
        let mut doc = RubricDoc::new("duplicate-charge", "T");
        let c: Fields = serde_json::from_value(json!({
            "id": "closed", "kind": "state",
            "points": 1, "query": "SELECT status FROM tickets WHERE id = 'T-1042'", "expect": {"equals": "closed"}
        }))
        .expect("fields");
        doc.criteria.push(c);
        let (checked, rubric) = check(&world, &doc);
        assert!(rubric.is_some(), "{:?}", checked.problems);
        assert_eq!(
            checked.sentences,
            ["Ticket T-1042 ends up with status “closed”"]
        );
        assert!(
            checked
                .toml
                .contains("description = \"Ticket T-1042 ends up with status “closed”\""),
            "{}",
            checked.toml
        );
    }

    #[test]
    fn blank_fields_and_defaults_are_left_out() {
        let mut doc = RubricDoc::new("duplicate-charge", "T");
        let c: Fields = serde_json::from_value(json!({
            "id": "told", "description": "", "kind": "message", "number": 79.0,
            "points": 1, "gate": false, "required": true, "section": null
        }))
        .expect("fields");
        doc.criteria.push(c);
        let text = doc.to_toml();
        assert_eq!(
            text,
            "format = 1\ntask = \"duplicate-charge\"\nversion = \"1\"\ntitle = \"T\"\n\n[[criteria]]\nid = \"told\"\nkind = \"message\"\nnumber = 79.0\npoints = 1\n"
        );
    }
}
