//! What a state criterion's query returns on a run's final state, for the
//! editor's advanced SQL view: the annotator writes a check and sees, at
//! once and read-only, the rows it reads on any stored run.
//!
//! The run is replayed by the engine ([`preview_after`]), never read from
//! a state someone supplies, and the query goes through
//! [`Episode::query`]: the world's SQL sandbox and operation budget, so a
//! preview can neither change the world nor hang. Only the first
//! [`PREVIEW_ROWS`] rows are sent back; a problem is a sentence an
//! annotator understands, not SQLite's wording.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::action::Action;
use crate::episode::Episode;
use crate::error::Result;
use crate::world::World;

/// At most this many rows are shown.
pub const PREVIEW_ROWS: usize = 50;

/// The rows a query read, or why it could not run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QueryPreview {
    /// The result's column names, in the query's order.
    pub columns: Vec<String>,
    /// The first [`PREVIEW_ROWS`] rows, each value in `columns` order.
    #[cfg_attr(feature = "ts", ts(type = "Array<Array<unknown>>"))]
    pub rows: Vec<Vec<Value>>,
    /// How many rows the query returned in all.
    pub total: u32,
    /// Why the query could not run, in plain words (then `rows` is empty).
    pub error: Option<String>,
}

impl QueryPreview {
    fn failed(message: String) -> QueryPreview {
        QueryPreview {
            columns: Vec::new(),
            rows: Vec::new(),
            total: 0,
            error: Some(message),
        }
    }
}

/// What `sql` reads on `episode`'s current state, read-only and bounded.
pub fn preview(episode: &Episode, sql: &str) -> QueryPreview {
    if sql.trim().is_empty() {
        return QueryPreview::failed(
            "Write the check first: the preview shows what it reads.".into(),
        );
    }
    match episode.query(sql, &Map::new()) {
        Ok(rows) => {
            let columns: Vec<String> = rows
                .first()
                .map(|r| r.keys().cloned().collect())
                .unwrap_or_default();
            let total = rows.len();
            let rows = rows
                .into_iter()
                .take(PREVIEW_ROWS)
                .map(|r| {
                    columns
                        .iter()
                        .map(|c| r.get(c).cloned().unwrap_or(Value::Null))
                        .collect()
                })
                .collect();
            QueryPreview {
                columns,
                rows,
                total: u32::try_from(total).unwrap_or(u32::MAX),
                error: None,
            }
        }
        Err(e) => QueryPreview::failed(plain_sql_error(&e.to_string())),
    }
}

/// Replays `actions` of `task_id` from `seed` on a fresh episode and shows
/// what `sql` reads on the final state. `expert` says the run was an
/// expert's, whose reads of the lists only experts see replay (an agent's
/// were refused). An error is a run that cannot be replayed; a query that
/// cannot run is in the preview's `error`.
pub fn preview_after(
    world: &Arc<World>,
    task_id: &str,
    seed: u64,
    actions: &[Action],
    expert: bool,
    sql: &str,
) -> Result<QueryPreview> {
    let mut episode = Episode::new(Arc::clone(world))?;
    episode.set_expert(expert);
    super::replay(&mut episode, task_id, seed, actions)?;
    Ok(preview(&episode, sql))
}

/// SQLite's and the sandbox's wording, said the way an annotator reads it.
pub fn plain_sql_error(message: &str) -> String {
    let m = message
        .trim()
        .trim_start_matches("database error: ")
        .trim_start_matches("error: ");
    // The name after SQLite's "no such …:", without the " in SELECT … at
    // offset 7" it may append.
    let after = |prefix: &str| {
        m.find(prefix)
            .and_then(|i| m[i + prefix.len()..].split_whitespace().next())
    };
    if let Some(table) = after("no such table:") {
        return format!("There is no table “{table}” in this world's records. Ctrl+Space in the check lists the tables it can read.");
    }
    if let Some(column) = after("no such column:") {
        return format!("There is no field “{column}” in the tables this check reads. Check its spelling against the table's fields.");
    }
    if let Some(function) = after("no such function:") {
        return format!("“{function}” is not something a check can use.");
    }
    if m.contains("syntax error") {
        let near = m
            .split_once("near \"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(w, _)| w);
        return match near {
            Some(w) => format!("The check is not written correctly near “{w}”."),
            None => "The check is not written correctly (it ends too early?).".into(),
        };
    }
    if m.contains("statements are not allowed") || m.contains("statement is empty") {
        return "A check starts with SELECT (or WITH) and reads the records.".into();
    }
    if m.contains("must only read") || m.contains("not authorized") || m.contains("not allowed") {
        return "A check may only read the records, never change them.".into();
    }
    if m.contains("took too long") || m.contains("was stopped") {
        return "The check takes too long to run on these records; make it simpler.".into();
    }
    if m.contains("incomplete input") {
        return "The check is not finished (a bracket or quote is left open?).".into();
    }
    let mut chars = m.chars();
    match chars.next() {
        Some(f) => format!(
            "The check cannot run: {}{}",
            f.to_lowercase(),
            chars.as_str()
        ),
        None => "The check cannot run.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn desk() -> Arc<World> {
        crate::rubric::support_desk()
    }

    fn solution() -> Vec<Action> {
        let world = desk();
        super::super::derive::solution(world.task("duplicate-charge").expect("task"))
            .expect("solution")
    }

    #[test]
    fn it_shows_the_rows_of_the_replayed_final_state() {
        let world = desk();
        let sql = "SELECT invoice_id, amount_cents FROM refunds WHERE invoice_id = 'INV-24073'";
        let before = preview_after(&world, "duplicate-charge", 0, &[], true, sql).expect("replays");
        assert_eq!(before.error, None);
        assert_eq!(before.total, 0, "no refund before anything is done");
        let after =
            preview_after(&world, "duplicate-charge", 0, &solution(), true, sql).expect("replays");
        assert_eq!(after.error, None, "{after:?}");
        assert_eq!(after.columns, ["invoice_id", "amount_cents"]);
        assert_eq!(after.total, 1);
        assert_eq!(after.rows, vec![vec![json!("INV-24073"), json!(7900)]]);
    }

    #[test]
    fn rows_are_bounded_and_counted() {
        let world = desk();
        let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120) SELECT i FROM n";
        let p = preview_after(&world, "duplicate-charge", 0, &[], true, sql).expect("replays");
        assert_eq!(p.error, None, "{p:?}");
        assert_eq!(p.total, 120);
        assert_eq!(p.rows.len(), PREVIEW_ROWS);
        assert_eq!(p.rows[0], vec![json!(1)]);
    }

    #[test]
    fn a_query_that_cannot_run_says_why_in_plain_words() {
        let world = desk();
        let run = |sql: &str| {
            let p = preview_after(&world, "duplicate-charge", 0, &[], true, sql).expect("replays");
            assert!(p.rows.is_empty() && p.columns.is_empty(), "{p:?}");
            p.error.expect("an error")
        };
        let table = run("SELECT * FROM nowhere");
        assert!(table.contains("no table “nowhere”"), "{table}");
        let column = run("SELECT colour FROM invoices");
        assert!(column.contains("no field “colour”"), "{column}");
        let syntax = run("SELEC id FROM invoices");
        assert_eq!(
            syntax,
            "A check starts with SELECT (or WITH) and reads the records."
        );
        let near = run("SELECT id FROM invoices WHERE");
        assert!(near.contains("not") && !near.contains("SQLITE"), "{near}");
        let write = run("DELETE FROM invoices");
        assert_eq!(
            write,
            "A check may only read the records, never change them."
        );
        let empty = run("   ");
        assert!(empty.starts_with("Write the check first"), "{empty}");
        // Nothing was changed by the attempt to delete.
        let p = preview_after(
            &world,
            "duplicate-charge",
            0,
            &[],
            true,
            "SELECT count(*) AS n FROM invoices",
        )
        .expect("replays");
        assert!(p.rows[0][0].as_i64().is_some_and(|n| n > 0), "{p:?}");
    }

    #[test]
    fn sqlite_wording_is_rewritten() {
        assert_eq!(
            plain_sql_error("database error: near \"FORM\": syntax error"),
            "The check is not written correctly near “FORM”."
        );
        assert!(plain_sql_error("the query took too long: interrupted").contains("too long"));
        assert!(plain_sql_error("database error: incomplete input").contains("not finished"));
        assert!(plain_sql_error("something odd").starts_with("The check cannot run: something odd"));
    }
}
