//! The store's schema, as numbered migrations: one folder per migration
//! under `src/store/migrations/` (`NN-name/up.sql`), embedded in the build.
//! Never edit a released migration: add the next number. `user_version`
//! records how far a file is.
//!
//! Opening a store checks its whole shape against what the migrations
//! create ([`problems`]): every table, column (with its type, `NOT NULL`
//! and key position) and index of its version must be there, and nothing
//! a later migration would create may be there yet. A store that fails is
//! damaged or half-migrated, and is refused before anything is written.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use include_dir::{include_dir, Dir};
use rusqlite::Connection;
use rusqlite_migration::Migrations;

/// `PRAGMA application_id` of an Understudy store ("USTY"), so a foreign
/// SQLite file is recognised and refused instead of being migrated.
pub const APPLICATION_ID: i32 = 0x5553_5459;

static MIGRATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/src/store/migrations");

/// The embedded migrations, in order.
///
/// # Panics
/// Never at run time for a released build: the folder is checked by this
/// module's tests, so a misnamed migration fails the build's tests.
pub fn migrations() -> Migrations<'static> {
    Migrations::from_directory(&MIGRATIONS)
        .expect("src/store/migrations holds NN-name/up.sql folders (checked by tests)")
}

/// How many migrations this build knows: the number of migration folders.
pub fn latest_version() -> usize {
    MIGRATIONS.dirs().count()
}

/// One column as `pragma_table_info` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Column {
    name: String,
    kind: String,
    not_null: bool,
    key: i64,
}

/// The tables (with their columns) and indexes of a database.
#[derive(Debug, Default)]
struct Shape {
    tables: BTreeMap<String, Vec<Column>>,
    indexes: BTreeSet<String>,
}

impl Shape {
    fn read(conn: &Connection) -> rusqlite::Result<Shape> {
        let mut shape = Shape::default();
        let mut objects = conn.prepare(
            "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'",
        )?;
        let rows =
            objects.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut tables = Vec::new();
        for row in rows {
            let (kind, name) = row?;
            if kind == "table" {
                tables.push(name);
            } else {
                shape.indexes.insert(name);
            }
        }
        let mut columns = conn.prepare(
            "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1) ORDER BY cid",
        )?;
        for table in tables {
            let cols = columns
                .query_map([&table], |r| {
                    Ok(Column {
                        name: r.get(0)?,
                        kind: r.get::<_, String>(1)?.to_ascii_uppercase(),
                        not_null: r.get(2)?,
                        key: r.get(3)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            shape.tables.insert(table, cols);
        }
        Ok(shape)
    }
}

/// The shape after each version (index 0: an empty database), computed
/// once by applying the migrations to an in-memory database.
fn expected() -> Result<&'static [Shape], String> {
    static SHAPES: OnceLock<Result<Vec<Shape>, String>> = OnceLock::new();
    SHAPES
        .get_or_init(|| {
            let fail =
                |e: &dyn std::fmt::Display| format!("cannot build the reference schema: {e}");
            let mut conn = Connection::open_in_memory().map_err(|e| fail(&e))?;
            let migrations = migrations();
            let mut shapes = vec![Shape::default()];
            for version in 1..=latest_version() {
                migrations
                    .to_version(&mut conn, version)
                    .map_err(|e| fail(&e))?;
                shapes.push(Shape::read(&conn).map_err(|e| fail(&e))?);
            }
            Ok(shapes)
        })
        .as_deref()
        .map_err(Clone::clone)
}

/// What is wrong with the shape of a store at schema `version`, one
/// phrase per problem; empty when it is sound. `Err` when the file cannot
/// be read at all.
pub fn problems(conn: &Connection, version: usize) -> Result<Vec<String>, String> {
    let shapes = expected()?;
    let (Some(want), Some(latest)) = (shapes.get(version), shapes.last()) else {
        return Ok(vec![format!("schema version {version} is unknown")]);
    };
    let have = Shape::read(conn).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (table, columns) in &want.tables {
        let Some(found) = have.tables.get(table) else {
            out.push(format!("table `{table}` is missing"));
            continue;
        };
        for col in columns {
            match found.iter().find(|c| c.name == col.name) {
                None => out.push(format!("column `{table}.{}` is missing", col.name)),
                Some(c) if c != col => out.push(format!(
                    "column `{table}.{}` is {}, expected {}",
                    col.name,
                    describe(c),
                    describe(col)
                )),
                Some(_) => {}
            }
        }
    }
    for index in want.indexes.difference(&have.indexes) {
        out.push(format!("index `{index}` is missing"));
    }
    // What a later migration creates must not exist yet, or that
    // migration would fail halfway through.
    for table in latest.tables.keys() {
        if !want.tables.contains_key(table) && have.tables.contains_key(table) {
            out.push(format!(
                "table `{table}` exists, but schema version {version} does not have it yet"
            ));
        }
    }
    for index in latest.indexes.difference(&want.indexes) {
        if have.indexes.contains(index) {
            out.push(format!(
                "index `{index}` exists, but schema version {version} does not have it yet"
            ));
        }
    }
    Ok(out)
}

fn describe(c: &Column) -> String {
    let mut s = if c.kind.is_empty() {
        "untyped".to_string()
    } else {
        c.kind.clone()
    };
    if c.not_null {
        s.push_str(" NOT NULL");
    }
    if c.key > 0 {
        s.push_str(&format!(" (primary key part {})", c.key));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_schema_has_every_table_of_every_version() {
        let shapes = expected().expect("builds");
        assert_eq!(shapes.len(), latest_version() + 1);
        assert!(shapes[0].tables.is_empty());
        let latest = shapes.last().expect("a version");
        for table in [
            "experts",
            "episodes",
            "steps",
            "reviews",
            "scores",
            "judgments",
            "drafts",
            "episode_events",
            "rubric_versions",
            "grading_assignments",
            "score_overrides",
            "pulled_episodes",
            "pulled_experts",
            "hub_cursors",
        ] {
            assert!(latest.tables.contains_key(table), "{table}");
        }
        let mut conn = Connection::open_in_memory().expect("db");
        migrations().to_latest(&mut conn).expect("migrates");
        assert_eq!(problems(&conn, latest_version()), Ok(vec![]));
        assert_eq!(
            problems(&conn, 1).expect("reads"),
            vec![
                "table `drafts` exists, but schema version 1 does not have it yet",
                "table `episode_events` exists, but schema version 1 does not have it yet",
                "table `grading_assignments` exists, but schema version 1 does not have it yet",
                "table `hub_cursors` exists, but schema version 1 does not have it yet",
                "table `judgments` exists, but schema version 1 does not have it yet",
                "table `pulled_episodes` exists, but schema version 1 does not have it yet",
                "table `pulled_experts` exists, but schema version 1 does not have it yet",
                "table `rubric_versions` exists, but schema version 1 does not have it yet",
                "table `score_overrides` exists, but schema version 1 does not have it yet",
                "table `scores` exists, but schema version 1 does not have it yet",
                "index `episode_events_by_episode` exists, but schema version 1 does not have it yet",
                "index `grading_assignments_by_grader` exists, but schema version 1 does not have it yet",
                "index `judgments_by_episode` exists, but schema version 1 does not have it yet",
                "index `rubric_versions_by_task` exists, but schema version 1 does not have it yet",
                "index `score_overrides_by_episode` exists, but schema version 1 does not have it yet",
                "index `scores_by_episode` exists, but schema version 1 does not have it yet",
            ]
        );
    }

    #[test]
    fn migrations_are_numbered_from_one_without_gaps_and_valid() {
        let mut numbers: Vec<usize> = MIGRATIONS
            .dirs()
            .map(|d| {
                let name = d.path().to_string_lossy().to_string();
                let (n, _) = name.split_once('-').expect("NN-name");
                assert!(
                    d.get_file(d.path().join("up.sql")).is_some(),
                    "{name}/up.sql"
                );
                n.parse().expect("a number before the dash")
            })
            .collect();
        numbers.sort();
        assert_eq!(numbers, (1..=latest_version()).collect::<Vec<_>>());
        migrations()
            .validate()
            .expect("migrations apply to an empty database");
    }
}
