//! Loading seed files (CSV, JSON) into the world database.
//!
//! Every problem is reported with its file and line (CSV) or record (JSON).
//! Foreign keys are checked once all files are in, so authors need not order
//! their seed list by dependency, and violations still point at a line.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use serde_json::Value;

use super::manifest::SeedToml;
use crate::diagnostics::Diagnostics;
use crate::sql::sql_message;
use crate::sql::values::from_json;

/// Where a seeded row came from, for error messages.
pub type Origins = HashMap<(String, i64), String>;

/// Stop reporting a file after this many problems; the rest are noise.
const MAX_PROBLEMS_PER_FILE: usize = 20;

#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub decl_type: String,
}

pub fn table_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<Column>> {
    let mut stmt = conn.prepare("SELECT name, type FROM pragma_table_info(?1) ORDER BY cid")?;
    let rows = stmt.query_map([table], |r| {
        Ok(Column {
            name: r.get(0)?,
            decl_type: r.get::<_, String>(1)?.to_ascii_uppercase(),
        })
    })?;
    rows.collect()
}

/// Loads one `[[seed]]` entry. Problems go to `diags`; rows that fail are
/// skipped so later problems are still found (the world is rejected anyway).
pub fn load(
    conn: &Connection,
    root: &Path,
    seed: &SeedToml,
    seed_line: usize,
    origins: &mut Origins,
    diags: &mut Diagnostics,
) {
    let columns = match table_columns(conn, &seed.table) {
        Ok(c) if !c.is_empty() => c,
        _ => {
            diags.push(
                "world.toml",
                Some(seed_line),
                Some(format!("seed {}", seed.file)),
                format!("table `{}` is not defined in schema.sql", seed.table),
            );
            return;
        }
    };
    for (what, col) in [
        ("key_column", &seed.key_column),
        ("document_column", &seed.document_column),
    ] {
        if let Some(col) = col {
            if !columns.iter().any(|c| &c.name == col) {
                diags.push(
                    "world.toml",
                    Some(seed_line),
                    Some(format!("seed {}", seed.file)),
                    format!("{what} `{col}` is not a column of table `{}`", seed.table),
                );
                return;
            }
        }
    }
    let path = root.join(&seed.file);
    // Read through a buffer as the records are parsed: a large world's
    // seed file is tens of megabytes, and holding its text beside the
    // database being seeded was a third of loading's peak memory.
    let file = match std::fs::File::open(&path) {
        Ok(f) => std::io::BufReader::with_capacity(1 << 16, f),
        Err(e) => {
            diags.push(
                "world.toml",
                Some(seed_line),
                Some(format!("seed {}", seed.file)),
                format!("cannot read seed file: {e}"),
            );
            return;
        }
    };
    let mut sink = Sink {
        conn,
        table: &seed.table,
        file: &seed.file,
        origins,
        diags,
        problems: 0,
    };
    if seed.file.ends_with(".csv") {
        load_csv(file, &columns, &mut sink);
    } else if seed.file.ends_with(".json") {
        load_json(file, &columns, seed, &mut sink);
    } else {
        sink.diags.push(
            "world.toml",
            Some(seed_line),
            Some(format!("seed {}", seed.file)),
            "seed files must be .csv or .json",
        );
    }
}

struct Sink<'a> {
    conn: &'a Connection,
    table: &'a str,
    file: &'a str,
    origins: &'a mut Origins,
    diags: &'a mut Diagnostics,
    problems: usize,
}

impl Sink<'_> {
    fn problem(&mut self, line: Option<usize>, subject: Option<String>, message: String) -> bool {
        self.problems += 1;
        if self.problems <= MAX_PROBLEMS_PER_FILE {
            self.diags.push(self.file, line, subject, message);
        }
        self.problems < MAX_PROBLEMS_PER_FILE * 5
    }

    fn insert(
        &mut self,
        names: &[&str],
        values: Vec<SqlValue>,
        origin: String,
        line: Option<usize>,
        subject: Option<String>,
    ) -> bool {
        let cols = names
            .iter()
            .map(|n| format!("\"{}\"", n.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(", ");
        let marks = vec!["?"; names.len()].join(", ");
        let sql = format!(
            "INSERT INTO \"{}\" ({cols}) VALUES ({marks})",
            self.table.replace('"', "\"\"")
        );
        let result = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.execute(rusqlite::params_from_iter(values.iter())));
        match result {
            Ok(_) => {
                let rowid = self.conn.last_insert_rowid();
                self.origins.insert((self.table.to_string(), rowid), origin);
                true
            }
            Err(e) => self.problem(
                line,
                subject,
                format!(
                    "row rejected by table `{}`: {}",
                    self.table,
                    sql_message(&e)
                ),
            ),
        }
    }
}

fn load_csv(file: impl std::io::Read, columns: &[Column], sink: &mut Sink<'_>) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(file);
    let headers: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(|s| s.trim().to_string()).collect(),
        Err(e) => {
            sink.problem(Some(1), None, format!("cannot read the header row: {e}"));
            return;
        }
    };
    let mut types = Vec::new();
    for name in &headers {
        match columns.iter().find(|c| &c.name == name) {
            Some(c) => types.push(c.decl_type.clone()),
            None => {
                sink.problem(
                    Some(1),
                    Some(format!("column `{name}`")),
                    format!(
                        "`{name}` is not a column of table `{}` (columns: {})",
                        sink.table,
                        columns
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
                return;
            }
        }
    }
    let names: Vec<&str> = headers.iter().map(String::as_str).collect();
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map(|p| p.line() as usize);
                if !sink.problem(line, None, format!("malformed CSV: {e}")) {
                    return;
                }
                continue;
            }
        };
        let line = record.position().map(|p| p.line() as usize);
        let mut values = Vec::with_capacity(names.len());
        let mut ok = true;
        for (i, field) in record.iter().enumerate() {
            match convert_csv(field, types.get(i).map(String::as_str).unwrap_or("")) {
                Ok(v) => values.push(v),
                Err(expected) => {
                    ok = false;
                    if !sink.problem(
                        line,
                        Some(format!("column `{}`", names.get(i).unwrap_or(&"?"))),
                        format!("expected {expected}, got {field:?}"),
                    ) {
                        return;
                    }
                }
            }
        }
        // The row's own width: a field that failed to convert is still a
        // field, and was reported as itself.
        if record.len() != names.len() {
            ok = false;
            sink.problem(
                line,
                None,
                format!("expected {} fields, got {}", names.len(), record.len()),
            );
        }
        if ok {
            let origin = format!("{}:{}", sink.file, line.unwrap_or(0));
            if !sink.insert(&names, values, origin, line, None) {
                return;
            }
        }
    }
}

/// Converts a CSV field by the column's declared type (SQLite affinity).
fn convert_csv(field: &str, decl: &str) -> Result<SqlValue, &'static str> {
    if field.is_empty() {
        return Ok(SqlValue::Null);
    }
    if decl.contains("BOOL") {
        return match field.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(SqlValue::Integer(1)),
            "false" | "0" | "no" => Ok(SqlValue::Integer(0)),
            _ => Err("true or false"),
        };
    }
    if decl.contains("INT") {
        return field
            .trim()
            .parse::<i64>()
            .map(SqlValue::Integer)
            .map_err(|_| "an integer");
    }
    if decl.contains("CHAR") || decl.contains("CLOB") || decl.contains("TEXT") {
        return Ok(SqlValue::Text(field.to_string()));
    }
    if decl.contains("REAL") || decl.contains("FLOA") || decl.contains("DOUB") {
        return field
            .trim()
            .parse::<f64>()
            .map(SqlValue::Real)
            .map_err(|_| "a number");
    }
    if decl.is_empty() || decl.contains("BLOB") {
        return Ok(SqlValue::Text(field.to_string()));
    }
    // NUMERIC affinity: numbers when they look like numbers.
    if let Ok(i) = field.trim().parse::<i64>() {
        Ok(SqlValue::Integer(i))
    } else if let Ok(f) = field.trim().parse::<f64>() {
        Ok(SqlValue::Real(f))
    } else {
        Ok(SqlValue::Text(field.to_string()))
    }
}

/// Loads a JSON seed file record by record as it is parsed: a whole
/// file's value tree takes several times the file's size (a big world's
/// seed ran to gigabytes), one record's does not.
fn load_json(file: impl std::io::Read, columns: &[Column], seed: &SeedToml, sink: &mut Sink<'_>) {
    let mut de = serde_json::Deserializer::from_reader(file);
    let mut records = Records {
        columns,
        seed,
        sink,
        index: 0,
        stopped: false,
    };
    let parsed =
        serde::Deserializer::deserialize_any(&mut de, &mut records).and_then(|()| de.end());
    if let Err(e) = parsed {
        if !records.stopped {
            records
                .sink
                .problem(Some(e.line()), None, format!("invalid JSON: {e}"));
        }
    }
}

/// Inserts each record of a seed file's top-level array or object as the
/// parser reaches it.
struct Records<'s, 'a> {
    columns: &'s [Column],
    seed: &'s SeedToml,
    sink: &'s mut Sink<'a>,
    /// Records seen so far (their position in an array).
    index: usize,
    /// The sink had enough problems: the rest is only skipped.
    stopped: bool,
}

impl<'de> serde::de::Visitor<'de> for &mut Records<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of records or an object keyed by id")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while !self.stopped {
            let Some(record) = seq.next_element::<Value>()? else {
                return Ok(());
            };
            let label = format!("record {}", self.index);
            self.index += 1;
            self.stopped = !load_record(self, None, label, &record);
        }
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.seed.key_column.is_none() {
            self.sink.problem(
                None,
                None,
                "the file is an object keyed by id; set `key_column` in its [[seed]] entry to name the column that receives the key".into(),
            );
            self.stopped = true;
        }
        while !self.stopped {
            let Some((key, record)) = map.next_entry::<String, Value>()? else {
                return Ok(());
            };
            let label = format!("record {key:?}");
            self.stopped = !load_record(self, Some(key), label, &record);
        }
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(())
    }

    // Anything else at the top level is not a seed file's shape.
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.not_records()
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.not_records()
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.not_records()
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        self.not_records()
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        self.not_records()
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.not_records()
    }
}

impl Records<'_, '_> {
    fn not_records<E>(&mut self) -> Result<(), E> {
        self.sink.problem(
            None,
            None,
            "expected an array of records or an object keyed by id".into(),
        );
        self.stopped = true;
        Ok(())
    }
}

/// Inserts one record; false once the sink had enough problems.
fn load_record(
    records: &mut Records<'_, '_>,
    key: Option<String>,
    label: String,
    record: &Value,
) -> bool {
    let Records {
        columns,
        seed,
        sink,
        ..
    } = records;
    let Some(fields) = record.as_object() else {
        return sink.problem(None, Some(label), "expected a JSON object".into());
    };
    let mut names: Vec<&str> = Vec::new();
    let mut values: Vec<SqlValue> = Vec::new();
    if let (Some(col), Some(key)) = (&seed.key_column, key) {
        names.push(col);
        values.push(SqlValue::Text(key));
    }
    if let Some(col) = &seed.document_column {
        names.push(col);
        values.push(SqlValue::Text(record.to_string()));
    }
    let mut ok = true;
    for (field, v) in fields {
        if names.contains(&field.as_str()) {
            continue;
        }
        match columns.iter().find(|c| &c.name == field) {
            Some(c) => {
                names.push(&c.name);
                values.push(from_json(v));
            }
            None if seed.document_column.is_some() => {}
            None => {
                ok = false;
                if !sink.problem(
                    None,
                    Some(label.clone()),
                    format!("field `{field}` is not a column of table `{}`", sink.table),
                ) {
                    return false;
                }
            }
        }
    }
    if ok {
        let origin = format!("{} {label}", sink.file);
        return sink.insert(&names, values, origin, None, Some(label));
    }
    true
}

/// Reports foreign-key violations among the seeded rows, by origin.
pub fn check_foreign_keys(conn: &Connection, origins: &Origins, diags: &mut Diagnostics) {
    let result = (|| -> rusqlite::Result<Vec<(String, Option<i64>, String)>> {
        let mut stmt =
            conn.prepare("SELECT \"table\", rowid, parent FROM pragma_foreign_key_check")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect()
    })();
    match result {
        Ok(violations) => {
            for (table, rowid, parent) in violations.into_iter().take(MAX_PROBLEMS_PER_FILE) {
                let origin = rowid
                    .and_then(|r| origins.get(&(table.clone(), r)))
                    .cloned()
                    .unwrap_or_else(|| format!("table {table}"));
                let (file, line) = match origin.rsplit_once(':') {
                    Some((f, l)) if l.parse::<usize>().is_ok() => (f.to_string(), l.parse().ok()),
                    _ => (origin.clone(), None),
                };
                diags.push(
                    file,
                    line,
                    Some(format!("table `{table}`")),
                    format!("refers to a row of `{parent}` that does not exist (foreign key)"),
                );
            }
        }
        Err(e) => diags.push(
            "schema.sql",
            None,
            None,
            format!("foreign key check failed: {e}"),
        ),
    }
}
