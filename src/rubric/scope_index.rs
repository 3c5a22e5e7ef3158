//! What scope criteria look things up in, built once per world from its
//! seeded records: which scoped table holds each key, which records reach
//! which (for a task's subject), and every sensitive value with its owner.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use super::interned::{Id, Interned};
use super::numbers::normalize;
use super::pruned_json;
use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::sql::values::{quote_ident, to_json};
use crate::world::scope::{value_text, Scope};
use crate::world::World;

/// A record: its table and key.
pub type RecordKey = (String, String);

/// Sensitive values shorter than this are not looked for: a 5-digit
/// postcode or 4 card digits read like any amount or count.
pub const MIN_SENSITIVE_CHARS: usize = 6;

/// Where a sensitive value is: the record holding it and the field, as the
/// scope writes it (`users.email`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner<'a> {
    pub table: &'a str,
    pub key: &'a str,
    pub field: &'a str,
}

/// A record inside the index: the number of its table (in `names`) and
/// of its key (in `keys`).
type Rec = (u16, Id);

/// The index keeps every key and value once, as numbers into two string
/// stores, and its relations as sorted arrays of those numbers: a large
/// world has hundreds of thousands of records and sensitive values, and
/// maps of `String`s held several times their bytes (tau-retail ×100's
/// index took 83 MB, more than half its data).
pub struct ScopeIndex {
    /// Every table the index names: the scope's tables, then the tables
    /// of its sensitive fields.
    names: Vec<Arc<str>>,
    /// Every record key, and every key a reach field points at.
    keys: Interned,
    /// Each scoped table's records, in the order the table lists its keys
    /// (SQLite reads them from the key's index): (table, its keys).
    table_keys: Vec<(u16, Vec<Id>)>,
    /// (key, table) of every scoped record, by key; a key's tables in
    /// scope order.
    tables_of_key: Vec<(Id, u16)>,
    /// (parent, child) for each record that reaches another directly, by
    /// parent.
    children: Vec<(Rec, Rec)>,
    /// Each sensitive field of the scope: its table and its text
    /// (`users.email`).
    fields: Vec<(u16, Arc<str>)>,
    /// Normalized sensitive values.
    values: Interned,
    /// (value, field, owner's key) for each sensitive value, by value; a
    /// value's owners in the scope's field order, then table order.
    owners: Vec<(Id, u16, Id)>,
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
        let mut names: Vec<Arc<str>> = Vec::new();
        let mut name_of = |table: &str| -> Result<u16> {
            if let Some(i) = names.iter().position(|n| &**n == table) {
                return Ok(i as u16);
            }
            let i = u16::try_from(names.len())
                .map_err(|_| Error::Other("a scope naming more than 65,535 tables".into()))?;
            names.push(Arc::from(table));
            Ok(i)
        };
        let mut keys = Interned::default();
        let mut table_keys = Vec::new();
        let mut tables_of_key = Vec::new();
        for table in scope.tables() {
            let t = name_of(table)?;
            let mut in_order = Vec::new();
            each_row(world, seed, table, None, |key, _| {
                let k = keys.intern(&key)?;
                tables_of_key.push((k, t));
                in_order.push(k);
                Ok(())
            })?;
            in_order.shrink_to_fit();
            table_keys.push((t, in_order));
        }
        let reach_tables = scope
            .reach
            .iter()
            .map(|r| Ok((name_of(&r.from)?, name_of(&r.table)?)))
            .collect::<Result<Vec<(u16, u16)>>>()?;
        if u16::try_from(scope.sensitive.len()).is_err() {
            return Err(Error::Other(
                "a scope naming more than 65,535 sensitive fields".into(),
            ));
        }
        let fields = scope
            .sensitive
            .iter()
            .map(|f| Ok((name_of(&f.table)?, Arc::from(f.text.as_str()))))
            .collect::<Result<Vec<(u16, Arc<str>)>>>()?;
        // Each (table, column) is read, and its JSON parsed, once however
        // many fields of it the scope names, and a row at a time: holding
        // a column's parsed documents took many times the world's size.
        // What each field finds is sorted by its place in the scope below
        // (stably), as if each were read on its own.
        let mut children: Vec<(Rec, usize, Rec)> = Vec::new();
        let mut values = Interned::default();
        let mut owners: Vec<(Id, u16, Id)> = Vec::new();
        for (column, uses) in columns_read(scope) {
            let paths: Vec<&[String]> = uses
                .iter()
                .map(|u| match *u {
                    Use::Reach(i) => scope.reach[i].via.path.as_slice(),
                    Use::Sensitive(i) => scope.sensitive[i].path.as_slice(),
                })
                .collect();
            each_row(
                world,
                seed,
                column.table,
                Some(column.column),
                |key, value| {
                    let doc = match value {
                        // As `FieldPath::values` reads a column: JSON text is
                        // parsed when the path goes inside it (only as far as
                        // the paths go); text that is not JSON holds nothing
                        // there.
                        Value::String(s) if column.inside => {
                            pruned_json::parse(&s, &paths).unwrap_or(Value::Null)
                        }
                        other => other,
                    };
                    let k = keys.intern(&key)?;
                    for u in &uses {
                        match *u {
                            Use::Reach(i) => {
                                let (from, table) = reach_tables[i];
                                for parent in scope.reach[i]
                                    .via
                                    .values_in(&doc)
                                    .into_iter()
                                    .filter_map(value_text)
                                {
                                    children.push(((from, keys.intern(&parent)?), i, (table, k)));
                                }
                            }
                            Use::Sensitive(i) => {
                                for v in scope.sensitive[i]
                                    .values_in(&doc)
                                    .into_iter()
                                    .filter_map(value_text)
                                {
                                    let v = normalize(&v);
                                    if v.chars().count() >= MIN_SENSITIVE_CHARS {
                                        // Fewer than 2^16 fields (checked above).
                                        owners.push((values.intern(&v)?, i as u16, k));
                                    }
                                }
                            }
                        }
                    }
                    Ok(())
                },
            )?;
        }
        // Stable sorts: a key's tables stay in scope order, a parent's
        // children and a value's owners in the scope's order, then row order.
        tables_of_key.sort_by_key(|&(k, _)| k);
        children.sort_by_key(|&(parent, rule, _)| (parent, rule));
        owners.sort_by_key(|&(v, field, _)| (v, field));
        let mut children: Vec<(Rec, Rec)> = children.into_iter().map(|(p, _, c)| (p, c)).collect();
        children.shrink_to_fit();
        tables_of_key.shrink_to_fit();
        owners.shrink_to_fit();
        keys.shrink_to_fit();
        values.shrink_to_fit();
        let finder = Finder::new(values.lengths());
        Ok(ScopeIndex {
            names,
            keys,
            table_keys,
            tables_of_key,
            children,
            fields,
            values,
            owners,
            finder,
        })
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
            let found = self.record(&r.0, &r.1);
            if out.insert(r) {
                let Some(parent) = found else { continue };
                todo.extend(run_of(&self.children, parent, |&(p, _)| p).iter().map(
                    |&(_, (t, k))| {
                        (
                            self.names[t as usize].to_string(),
                            self.keys.get(k).to_string(),
                        )
                    },
                ));
            }
        }
        out
    }

    /// A table and key as the index numbers them, when it has both.
    fn record(&self, table: &str, key: &str) -> Option<Rec> {
        let t = self.names.iter().position(|n| &**n == table)?;
        Some((t as u16, self.keys.find(key)?))
    }

    /// The first `n` keys of `table` outside `subject`.
    pub fn outside_keys(&self, table: &str, subject: &HashSet<RecordKey>, n: usize) -> Vec<String> {
        self.table_keys
            .iter()
            .filter(|(t, _)| &*self.names[*t as usize] == table)
            .flat_map(|(_, keys)| keys)
            .map(|&k| self.keys.get(k))
            .filter(|k| !subject.contains(&(table.to_string(), (*k).to_string())))
            .take(n)
            .map(str::to_string)
            .collect()
    }

    /// The scoped tables holding a record keyed `value`.
    pub fn tables_of(&self, value: &str) -> Vec<&str> {
        let Some(k) = self.keys.find(value) else {
            return Vec::new();
        };
        run_of(&self.tables_of_key, k, |&(key, _)| key)
            .iter()
            .map(|&(_, t)| &*self.names[t as usize])
            .collect()
    }

    /// Where sensitive value `v` is, in the scope's field order.
    fn owners_of(&self, v: Id) -> impl Iterator<Item = Owner<'_>> + '_ {
        run_of(&self.owners, v, |&(value, _, _)| value)
            .iter()
            .map(move |&(_, field, key)| {
                let (table, text) = &self.fields[field as usize];
                Owner {
                    table: &self.names[*table as usize],
                    key: self.keys.get(key),
                    field: text,
                }
            })
    }

    /// Sensitive values `normalized` text contains, each with its owners.
    pub fn sensitive_in<'a>(&'a self, normalized: &'a str) -> Vec<(&'a str, Vec<Owner<'a>>)> {
        self.finder
            .find_iter(normalized, |v| self.values.find(v).is_some())
            .filter(|&(start, end)| boundary(normalized, start, end))
            .filter_map(|(start, end)| {
                let m = &normalized[start..end];
                self.values
                    .find(m)
                    .map(|v| (m, self.owners_of(v).collect()))
            })
            .collect()
    }

    /// One sensitive value of a record outside `subject`, for lint's
    /// disclosure mutant: (value as stored, its field, its owner's key),
    /// the least in that order (value, table, key, field).
    pub fn outside_value(&self, subject: &HashSet<RecordKey>) -> Option<(String, String, String)> {
        let subject: HashSet<(&str, &str)> = subject
            .iter()
            .map(|(t, k)| (t.as_str(), k.as_str()))
            .collect();
        let mut ids: Vec<Id> = self.owners.iter().map(|&(v, _, _)| v).collect();
        ids.dedup();
        let mut values: Vec<(&str, Id)> =
            ids.into_iter().map(|v| (self.values.get(v), v)).collect();
        values.sort_unstable();
        values.into_iter().find_map(|(text, v)| {
            self.owners_of(v)
                .filter(|o| !subject.contains(&(o.table, o.key)))
                .min_by(|a, b| (a.table, a.key, a.field).cmp(&(b.table, b.key, b.field)))
                .map(|o| (text.to_string(), o.field.to_string(), o.key.to_string()))
        })
    }
}

/// The entries of `sorted` (in order of `key_of`) whose key is `key`.
fn run_of<T, K: Ord>(sorted: &[T], key: K, key_of: impl Fn(&T) -> K) -> &[T] {
    let from = sorted.partition_point(|x| key_of(x) < key);
    let len = sorted[from..].partition_point(|x| key_of(x) == key);
    &sorted[from..from + len]
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
/// It keeps only the lengths: the values themselves are in the index's
/// string store, looked up through `is_value`, so a large world's values
/// are held once.
#[derive(Default)]
struct Finder {
    /// The byte lengths values have, longest first.
    lengths: Vec<usize>,
}

impl Finder {
    fn new(lengths: impl Iterator<Item = usize>) -> Finder {
        let mut lengths: Vec<usize> = lengths.collect();
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
    mut f: impl FnMut(String, Value) -> Result<()>,
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
            f(k, to_json(row.get_ref(1)?))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index's answers on tau-retail, each against the same question
    /// asked of the seeded documents directly (every document parsed
    /// whole, every field read as the scope says).
    #[test]
    fn the_index_answers_as_a_scan_of_the_seeded_documents_does() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/worlds/tau-retail");
        let world = Arc::new(World::load(&root).expect("tau-retail loads"));
        let scope = world.scope.clone().expect("a scope");
        let ix = ScopeIndex::of(&world, &scope).expect("index");
        let base = world.base.get(&world.snapshot).expect("seed connection");
        let conn = crate::world::base::lock(&base);
        let docs = |table: &str| -> Vec<(String, Value)> {
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT id, doc FROM {} ORDER BY rowid",
                    quote_ident(table)
                ))
                .expect("prepare");
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .expect("query");
            rows.map(|r| {
                let (k, d) = r.expect("row");
                (k, serde_json::from_str(&d).expect("JSON"))
            })
            .collect()
        };
        let (users, orders) = (docs("users"), docs("orders"));

        let user = "omar_anderson_3203";
        let subject = ix.subject(&scope, &[user.to_string()]);
        let mut expected: HashSet<RecordKey> = orders
            .iter()
            .filter(|(_, d)| d["user_id"] == user)
            .map(|(k, _)| ("orders".to_string(), k.clone()))
            .collect();
        expected.insert(("users".to_string(), user.to_string()));
        assert_eq!(subject, expected);
        // A key that is no record is its own subject, reaching nothing.
        let nobody = ix.subject(&scope, &["nobody_0000".to_string()]);
        assert_eq!(nobody.len(), 1);

        assert_eq!(ix.tables_of("#W6067464"), vec!["orders"]);
        assert_eq!(ix.tables_of(user), vec!["users"]);
        assert!(ix.tables_of("#W0000000").is_empty());

        // In the order the table lists its keys (SQLite reads them from
        // the key's index).
        let mut stmt = conn.prepare("SELECT id FROM orders").expect("prepare");
        let keys: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .expect("query")
            .map(|k| k.expect("key"))
            .collect();
        let outside: Vec<String> = keys
            .into_iter()
            .filter(|k| !subject.contains(&("orders".to_string(), k.clone())))
            .take(2)
            .collect();
        assert_eq!(ix.outside_keys("orders", &subject, 2), outside);
        assert!(ix.outside_keys("products", &subject, 2).is_empty());

        // Every sensitive value of every user, as the scope names them.
        let mut all: Vec<(String, String, String, String)> = Vec::new();
        for (key, doc) in &users {
            for f in &scope.sensitive {
                for v in f.values_in(doc).into_iter().filter_map(value_text) {
                    let v = normalize(&v);
                    if v.chars().count() >= MIN_SENSITIVE_CHARS {
                        all.push((v, f.table.clone(), key.clone(), f.text.clone()));
                    }
                }
            }
        }
        all.sort();
        let least_outside = all
            .iter()
            .find(|(_, t, k, _)| !subject.contains(&(t.clone(), k.clone())))
            .map(|(v, _, k, f)| (v.clone(), f.clone(), k.clone()));
        assert_eq!(ix.outside_value(&subject), least_outside);

        let (email, _, owner, field) = all
            .iter()
            .find(|(_, _, k, f)| k == user && f == "users.email")
            .expect("the user's email");
        let text = normalize(&format!("Write to {email} today."));
        let found = ix.sensitive_in(&text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, email.as_str());
        assert_eq!(
            found[0].1,
            vec![Owner {
                table: "users",
                key: owner,
                field
            }]
        );
        assert!(ix
            .sensitive_in(&normalize(&format!("x{email}x")))
            .is_empty());
    }

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
        let finder = Finder::new(owned.iter().map(String::len));
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
