//! What scope criteria look things up in, built once per world from its
//! seeded records: which scoped table holds each key, which records reach
//! which (for a task's subject), and every sensitive value with its owner.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use regex::Regex;
use serde_json::{Map, Value};

use super::numbers::normalize;
use crate::episode::Episode;
use crate::error::Result;
use crate::world::scope::{value_text, FieldPath, Scope};
use crate::world::World;

/// A record: its table and key.
pub type RecordKey = (String, String);

/// Sensitive values shorter than this are not looked for: a 5-digit
/// postcode or 4 card digits read like any amount or count.
pub const MIN_SENSITIVE_CHARS: usize = 6;

pub struct ScopeIndex {
    /// Scoped tables holding a record with this key.
    tables_of_key: HashMap<String, Vec<String>>,
    /// Each scoped table's keys, in table order.
    keys: HashMap<String, Vec<String>>,
    /// A record → the records that reach it directly.
    children: HashMap<RecordKey, Vec<RecordKey>>,
    /// Normalized sensitive value → (owner, field).
    sensitive: HashMap<String, Vec<(RecordKey, String)>>,
    /// Finds any sensitive value in normalized text.
    finder: Option<Regex>,
}

type Cache = Mutex<HashMap<(std::path::PathBuf, String), Arc<ScopeIndex>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

impl ScopeIndex {
    /// The index of `world`'s scope (built on first use, then shared).
    pub fn of(world: &Arc<World>, scope: &Scope) -> Result<Arc<ScopeIndex>> {
        let key = (world.root.clone(), world.content_hash.clone());
        if let Some(ix) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(Arc::clone(ix));
        }
        let episode = Episode::new(Arc::clone(world))?;
        let ix = Arc::new(Self::build(world, scope, &episode)?);
        cache()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, Arc::clone(&ix));
        Ok(ix)
    }

    fn build(world: &World, scope: &Scope, episode: &Episode) -> Result<ScopeIndex> {
        let mut ix = ScopeIndex {
            tables_of_key: HashMap::new(),
            keys: HashMap::new(),
            children: HashMap::new(),
            sensitive: HashMap::new(),
            finder: None,
        };
        for table in scope.tables() {
            for (key, _) in rows(world, episode, table, None)? {
                ix.tables_of_key
                    .entry(key.clone())
                    .or_default()
                    .push(table.to_string());
                ix.keys.entry(table.to_string()).or_default().push(key);
            }
        }
        for r in &scope.reach {
            for (key, col) in rows(world, episode, &r.table, Some(&r.via))? {
                for parent in r.via.values(&col).iter().filter_map(value_text) {
                    ix.children
                        .entry((r.from.clone(), parent))
                        .or_default()
                        .push((r.table.clone(), key.clone()));
                }
            }
        }
        for f in &scope.sensitive {
            for (key, col) in rows(world, episode, &f.table, Some(f))? {
                for v in f.values(&col).iter().filter_map(value_text) {
                    let v = normalize(&v);
                    if v.chars().count() >= MIN_SENSITIVE_CHARS {
                        ix.sensitive
                            .entry(v)
                            .or_default()
                            .push(((f.table.clone(), key.clone()), f.text.clone()));
                    }
                }
            }
        }
        let mut values: Vec<&String> = ix.sensitive.keys().collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        if !values.is_empty() {
            let alternation: Vec<String> = values.iter().map(|v| regex::escape(v)).collect();
            ix.finder = regex::RegexBuilder::new(&alternation.join("|"))
                .size_limit(64 << 20)
                .build()
                .ok();
        }
        Ok(ix)
    }

    /// The keys of the subject records a task's `records` name.
    pub fn subject_keys(scope: &Scope, task: &crate::world::Task) -> Vec<String> {
        task.records
            .iter()
            .filter(|r| r.table == scope.subject)
            .filter_map(|r| value_text(&r.key))
            .collect()
    }

    /// Every record of the subject: the task's records of the subject
    /// table and, transitively, the records that reach them.
    pub fn subject(&self, scope: &Scope, keys: &[String]) -> HashSet<RecordKey> {
        let mut out: HashSet<RecordKey> = HashSet::new();
        let mut todo: Vec<RecordKey> = keys
            .iter()
            .map(|k| (scope.subject.clone(), k.clone()))
            .collect();
        while let Some(r) = todo.pop() {
            if out.insert(r.clone()) {
                todo.extend(self.children.get(&r).into_iter().flatten().cloned());
            }
        }
        out
    }

    /// The first `n` keys of `table` outside `subject`.
    pub fn outside_keys(&self, table: &str, subject: &HashSet<RecordKey>, n: usize) -> Vec<String> {
        self.keys
            .get(table)
            .into_iter()
            .flatten()
            .filter(|k| !subject.contains(&(table.to_string(), (*k).clone())))
            .take(n)
            .cloned()
            .collect()
    }

    /// The scoped tables holding a record keyed `value`.
    pub fn tables_of(&self, value: &str) -> &[String] {
        self.tables_of_key.get(value).map_or(&[], Vec::as_slice)
    }

    /// Sensitive values `normalized` text contains, each with its owners.
    pub fn sensitive_in<'a>(
        &'a self,
        normalized: &'a str,
    ) -> Vec<(&'a str, &'a [(RecordKey, String)])> {
        let Some(re) = &self.finder else {
            return Vec::new();
        };
        re.find_iter(normalized)
            .filter(|m| boundary(normalized, m.start(), m.end()))
            .filter_map(|m| {
                self.sensitive
                    .get(m.as_str())
                    .map(|o| (m.as_str(), o.as_slice()))
            })
            .collect()
    }

    /// One sensitive value of a record outside `subject`, for lint's
    /// disclosure mutant: (value as stored, its field, its owner's key).
    pub fn outside_value(&self, subject: &HashSet<RecordKey>) -> Option<(String, String, String)> {
        let mut all: Vec<(&String, &(RecordKey, String))> = self
            .sensitive
            .iter()
            .flat_map(|(v, owners)| owners.iter().map(move |o| (v, o)))
            .filter(|(_, (owner, _))| !subject.contains(owner))
            .collect();
        all.sort();
        all.first()
            .map(|(v, ((_, key), field))| ((*v).clone(), field.clone(), key.clone()))
    }
}

/// A match that does not start or end inside a word.
fn boundary(text: &str, start: usize, end: usize) -> bool {
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let first = text[start..].chars().next();
    let last = text[..end].chars().next_back();
    let starts_inside = alnum(first) && alnum(text[..start].chars().next_back());
    let ends_inside = alnum(last) && alnum(text[end..].chars().next());
    !(starts_inside || ends_inside)
}

/// Every record of `table`: its key and the value of `field`'s column.
fn rows(
    world: &World,
    episode: &Episode,
    table: &str,
    field: Option<&FieldPath>,
) -> Result<Vec<(String, Value)>> {
    let Some(key) = world.table(table).and_then(|t| t.key_column.clone()) else {
        return Ok(Vec::new());
    };
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let col = field.map_or_else(|| "NULL".to_string(), |f| q(&f.column));
    let rows = episode.query(
        &format!("SELECT {} AS k, {col} AS v FROM {}", q(&key), q(table)),
        &Map::new(),
    )?;
    Ok(rows
        .into_iter()
        .filter_map(|mut r| {
            let k = r.get("k").and_then(value_text)?;
            Some((k, r.remove("v").unwrap_or(Value::Null)))
        })
        .collect())
}
