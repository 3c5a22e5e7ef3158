//! What scope criteria look things up in, built once per world from its
//! seeded records: which scoped table holds each key, which records reach
//! which (for a task's subject), and every sensitive value with its owner.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use super::numbers::normalize;
use rusqlite::Connection;

use crate::error::Result;
use crate::sql::values::{quote_ident, to_json};
use crate::world::scope::{value_text, Scope};
use crate::world::World;

/// A record: its table and key.
pub type RecordKey = (String, String);

/// Sensitive values shorter than this are not looked for: a 5-digit
/// postcode or 4 card digits read like any amount or count.
pub const MIN_SENSITIVE_CHARS: usize = 6;

/// Where a sensitive value is: the record holding it and the field, as the
/// scope writes it (`users.email`). Table and field names are shared by
/// every owner of their kind: a large world has hundreds of thousands.
#[derive(Debug, Clone)]
pub struct Owner {
    pub table: Arc<str>,
    pub key: String,
    pub field: Arc<str>,
}

pub struct ScopeIndex {
    /// Scoped tables holding a record with this key.
    tables_of_key: HashMap<String, Vec<Arc<str>>>,
    /// Each scoped table's keys, in table order.
    keys: HashMap<String, Vec<String>>,
    /// A record → the records that reach it directly.
    children: HashMap<RecordKey, Vec<(Arc<str>, String)>>,
    /// Normalized sensitive value → where it is.
    sensitive: HashMap<String, Vec<Owner>>,
    /// Finds any sensitive value in normalized text.
    finder: Finder,
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
        // The shared read-only seed connection: no copy of the world.
        let base = world.base.get(&world.snapshot)?;
        let ix = Arc::new(Self::build(world, scope, &crate::world::base::lock(&base))?);
        cache()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, Arc::clone(&ix));
        Ok(ix)
    }

    fn build(world: &World, scope: &Scope, seed: &Connection) -> Result<ScopeIndex> {
        let mut ix = ScopeIndex {
            tables_of_key: HashMap::new(),
            keys: HashMap::new(),
            children: HashMap::new(),
            sensitive: HashMap::new(),
            finder: Finder::default(),
        };
        for table in scope.tables() {
            let name: Arc<str> = Arc::from(table);
            let mut keys = Vec::new();
            each_row(world, seed, table, None, |key, _| {
                ix.tables_of_key
                    .entry(key.clone())
                    .or_default()
                    .push(Arc::clone(&name));
                keys.push(key);
            })?;
            ix.keys.entry(table.to_string()).or_default().extend(keys);
        }
        // Each (table, column) is read, and its JSON parsed, once however
        // many fields of it the scope names, and a row at a time: holding
        // a column's parsed documents took many times the world's size.
        // What each field finds is kept apart and added in the scope's
        // order, as if each were read on its own.
        let mut reached: Vec<Vec<(String, String)>> = vec![Vec::new(); scope.reach.len()];
        let mut told: Vec<Vec<(String, String)>> = vec![Vec::new(); scope.sensitive.len()];
        for (column, uses) in columns_read(scope) {
            each_row(
                world,
                seed,
                column.table,
                Some(column.column),
                |key, value| {
                    let doc = match value {
                        // As `FieldPath::values` reads a column: JSON text is
                        // parsed when the path goes inside it; text that is not
                        // JSON holds nothing there.
                        Value::String(s) if column.inside => {
                            serde_json::from_str(&s).unwrap_or(Value::Null)
                        }
                        other => other,
                    };
                    for u in &uses {
                        match *u {
                            Use::Reach(i) => {
                                let r = &scope.reach[i];
                                for parent in
                                    r.via.values_in(&doc).into_iter().filter_map(value_text)
                                {
                                    reached[i].push((parent, key.clone()));
                                }
                            }
                            Use::Sensitive(i) => {
                                let f = &scope.sensitive[i];
                                for v in f.values_in(&doc).into_iter().filter_map(value_text) {
                                    let v = normalize(&v);
                                    if v.chars().count() >= MIN_SENSITIVE_CHARS {
                                        told[i].push((v, key.clone()));
                                    }
                                }
                            }
                        }
                    }
                },
            )?;
        }
        for (r, found) in scope.reach.iter().zip(reached) {
            let table: Arc<str> = Arc::from(r.table.as_str());
            for (parent, key) in found {
                ix.children
                    .entry((r.from.clone(), parent))
                    .or_default()
                    .push((Arc::clone(&table), key));
            }
        }
        for (f, found) in scope.sensitive.iter().zip(told) {
            let (table, field): (Arc<str>, Arc<str>) =
                (Arc::from(f.table.as_str()), Arc::from(f.text.as_str()));
            for (v, key) in found {
                ix.sensitive.entry(v).or_default().push(Owner {
                    table: Arc::clone(&table),
                    key,
                    field: Arc::clone(&field),
                });
            }
        }
        ix.finder = Finder::new(ix.sensitive.keys());
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
                todo.extend(
                    self.children
                        .get(&r)
                        .into_iter()
                        .flatten()
                        .map(|(t, k)| (t.to_string(), k.clone())),
                );
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
    pub fn tables_of(&self, value: &str) -> &[Arc<str>] {
        self.tables_of_key.get(value).map_or(&[], Vec::as_slice)
    }

    /// Sensitive values `normalized` text contains, each with its owners.
    pub fn sensitive_in<'a>(&'a self, normalized: &'a str) -> Vec<(&'a str, &'a [Owner])> {
        self.finder
            .find_iter(normalized, |v| self.sensitive.contains_key(v))
            .filter(|&(start, end)| boundary(normalized, start, end))
            .filter_map(|(start, end)| {
                let m = &normalized[start..end];
                self.sensitive.get(m).map(|o| (m, o.as_slice()))
            })
            .collect()
    }

    /// One sensitive value of a record outside `subject`, for lint's
    /// disclosure mutant: (value as stored, its field, its owner's key).
    pub fn outside_value(&self, subject: &HashSet<RecordKey>) -> Option<(String, String, String)> {
        let subject: HashSet<(&str, &str)> = subject
            .iter()
            .map(|(t, k)| (t.as_str(), k.as_str()))
            .collect();
        let mut all: Vec<(&str, &str, &str, &str)> = self
            .sensitive
            .iter()
            .flat_map(|(v, owners)| {
                owners
                    .iter()
                    .map(move |o| (v.as_str(), &*o.table, o.key.as_str(), &*o.field))
            })
            .filter(|(_, table, key, _)| !subject.contains(&(*table, *key)))
            .collect();
        all.sort();
        all.first()
            .map(|(v, _, key, field)| (v.to_string(), field.to_string(), key.to_string()))
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

/// Finds the sensitive values in a text as one alternation of them all,
/// longest first, would (leftmost match, then the longest value starting
/// there; matches do not overlap), by hash look-ups of the text's pieces of
/// each length a value has, instead of compiling that alternation: on
/// τ-airline's thousands of values, compiling it was a fifth of a whole
/// `score` run, and a large world's alternation outgrew the regex size
/// limit, which left disclosure checks finding nothing at all.
///
/// It keeps only the lengths: the values themselves are the keys of the
/// index's map, looked up through `is_value`, so a large world's values
/// are held once.
#[derive(Default)]
struct Finder {
    /// The byte lengths values have, longest first.
    lengths: Vec<usize>,
}

impl Finder {
    fn new<'a>(values: impl Iterator<Item = &'a String>) -> Finder {
        let mut lengths: Vec<usize> = values.map(String::len).collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        lengths.dedup();
        Finder { lengths }
    }

    /// Byte ranges of the matches in `text`, left to right.
    fn find_iter<'a>(
        &'a self,
        text: &'a str,
        is_value: impl Fn(&str) -> bool + 'a,
    ) -> impl Iterator<Item = (usize, usize)> + 'a {
        let mut at = 0;
        std::iter::from_fn(move || {
            while at < text.len() {
                let start = at;
                let found = self.lengths.iter().find_map(|&n| {
                    let end = start + n;
                    (end <= text.len() && text.is_char_boundary(end) && is_value(&text[start..end]))
                        .then_some(end)
                });
                if let Some(end) = found {
                    at = end;
                    return Some((start, end));
                }
                at += text[start..].chars().next().map_or(1, char::len_utf8);
            }
            None
        })
    }
}

/// A column the index reads: its table, its name, and whether a field's
/// path goes inside it (its text is then parsed as JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ColumnRead<'s> {
    table: &'s str,
    column: &'s str,
    inside: bool,
}

/// What a column's values feed: a reach rule or a sensitive field, by its
/// place in the scope.
#[derive(Debug, Clone, Copy)]
enum Use {
    Reach(usize),
    Sensitive(usize),
}

/// Every column the scope's fields read, each once, with the fields that
/// read it.
fn columns_read(scope: &Scope) -> Vec<(ColumnRead<'_>, Vec<Use>)> {
    let fields = scope
        .reach
        .iter()
        .enumerate()
        .map(|(i, r)| (&r.via, Use::Reach(i)))
        .chain(
            scope
                .sensitive
                .iter()
                .enumerate()
                .map(|(i, f)| (f, Use::Sensitive(i))),
        );
    let mut out: Vec<(ColumnRead<'_>, Vec<Use>)> = Vec::new();
    for (f, u) in fields {
        let column = ColumnRead {
            table: &f.table,
            column: &f.column,
            inside: !f.path.is_empty(),
        };
        match out.iter_mut().find(|(c, _)| *c == column) {
            Some((_, uses)) => uses.push(u),
            None => out.push((column, vec![u])),
        }
    }
    out
}

/// Calls `f` with each record of `table`: its key and the value of
/// `column` (null without one), a row at a time.
fn each_row(
    world: &World,
    seed: &Connection,
    table: &str,
    column: Option<&str>,
    mut f: impl FnMut(String, Value),
) -> Result<()> {
    let Some(key) = world.table(table).and_then(|t| t.key_column.clone()) else {
        return Ok(());
    };
    let col = column.map_or_else(|| "NULL".to_string(), quote_ident);
    let sql = format!(
        "SELECT {} AS k, {col} AS v FROM {}",
        quote_ident(&key),
        quote_ident(table)
    );
    let mut stmt = seed.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        if let Some(k) = value_text(&to_json(row.get_ref(0)?)) {
            f(k, to_json(row.get_ref(1)?));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the finder replaced: one regex alternation, longest first.
    fn by_regex(values: &[&str], text: &str) -> Vec<(usize, usize)> {
        let mut sorted: Vec<&str> = values.to_vec();
        sorted.sort_by_key(|v| std::cmp::Reverse(v.len()));
        let alternation: Vec<String> = sorted.iter().map(|v| regex::escape(v)).collect();
        let re = regex::Regex::new(&alternation.join("|")).expect("regex");
        re.find_iter(text).map(|m| (m.start(), m.end())).collect()
    }

    #[test]
    fn the_finder_matches_as_the_longest_first_alternation_did() {
        let values = [
            "123456",
            "1234567",
            "3456789",
            "ada@example.com",
            "da@example.com",
            "straße 12",
            "überweg 4",
            "main st 1",
        ];
        let owned: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let finder = Finder::new(owned.iter());
        let set: HashSet<&str> = values.iter().copied().collect();
        let is_value = |v: &str| set.contains(v);
        for text in [
            "",
            "no values here",
            "1234567 and 123456 and 123456789",
            "write to ada@example.com or da@example.com",
            "xada@example.comx",
            "die straße 12 und das überweg 4",
            "ü123456ü straße 123",
            "12345678901234567",
            "main st 1main st 1",
        ] {
            let found: Vec<(usize, usize)> = finder.find_iter(text, is_value).collect();
            assert_eq!(found, by_regex(&values, text), "in {text:?}");
        }
        assert_eq!(
            finder
                .find_iter("call 1234567 now", is_value)
                .collect::<Vec<_>>(),
            vec![(5, 12)]
        );
        assert_eq!(Finder::default().find_iter("123456", is_value).count(), 0);
    }
}
