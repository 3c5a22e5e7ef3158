//! `kind = "state"` with `changes`: which records may differ from the seed
//! (`{ only = [..] }`), or none at all (`{ none = true }`).

use super::compile::CompileCx;
use crate::rubric::evaluation::{ChangeRef, Context, Evidence, Outcome};
use crate::rubric::matchers::records;

/// Only these records may differ from the seed (`None` key: any record of
/// the table).
#[derive(Debug, Clone)]
pub(crate) struct ChangesCheck {
    pub only: Vec<(String, Option<String>)>,
}

impl ChangesCheck {
    pub fn compile(v: &toml::Value, cx: &mut CompileCx<'_, '_>) -> Option<ChangesCheck> {
        let usage = "changes must be { only = [{ table = \"..\", key = \"..\" }, ...] } (key optional: any record of the table) or { none = true }";
        let Some(t) = v.as_table() else {
            cx.problem(None, usage);
            return None;
        };
        if t.len() == 1 && t.get("none").and_then(|v| v.as_bool()) == Some(true) {
            return Some(ChangesCheck { only: Vec::new() });
        }
        let Some(list) = t
            .get("only")
            .and_then(|v| v.as_array())
            .filter(|_| t.len() == 1)
        else {
            cx.problem(None, usage);
            return None;
        };
        let mut only = Vec::new();
        for (i, item) in list.iter().enumerate() {
            let Some(entry) = item.as_table() else {
                cx.problem(None, format!("changes.only[{i}]: {usage}"));
                continue;
            };
            let Some(table) = entry.get("table").and_then(|v| v.as_str()) else {
                cx.problem(None, format!("changes.only[{i}] needs `table`"));
                continue;
            };
            if cx.world.table(table).is_none() {
                let known: Vec<&str> = cx.world.tables.iter().map(|t| t.name.as_str()).collect();
                cx.problem(
                    None,
                    format!(
                        "changes.only[{i}]: there is no table `{table}` (tables: {})",
                        known.join(", ")
                    ),
                );
            }
            if let Some(bad) = entry.keys().find(|k| *k != "table" && *k != "key") {
                cx.problem(
                    None,
                    format!("changes.only[{i}]: unknown key `{bad}` (use table and key)"),
                );
            }
            let key = match entry.get("key") {
                None => None,
                Some(toml::Value::String(s)) => Some(s.clone()),
                Some(toml::Value::Integer(n)) => Some(n.to_string()),
                Some(_) => {
                    cx.problem(
                        None,
                        format!("changes.only[{i}].key must be text or an integer"),
                    );
                    None
                }
            };
            only.push((table.to_string(), key));
        }
        Some(ChangesCheck { only })
    }

    pub fn evaluate(&self, cx: &Context<'_>) -> (Outcome, Evidence) {
        let changes = match cx.changes() {
            Ok(c) => c,
            Err(e) => {
                return (
                    Outcome::Error(format!("the state diff failed: {e}")),
                    Evidence::detail(e),
                )
            }
        };
        let allowed = |table: &str, key: &str| {
            self.only
                .iter()
                .any(|(t, k)| t == table && k.as_deref().is_none_or(|k| k == key))
        };
        let mut unexpected = Vec::new();
        for (table, tc) in changes {
            let keys = tc
                .added
                .keys()
                .map(|k| (k.clone(), "added"))
                .chain(tc.changed.keys().map(|k| (k.clone(), "changed")))
                .chain(tc.removed.iter().map(|k| {
                    (
                        k.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| k.to_string()),
                        "removed",
                    )
                }));
            for (key, change) in keys {
                if !allowed(table, &key) {
                    unexpected.push(ChangeRef {
                        table: table.clone(),
                        key,
                        change: change.to_string(),
                    });
                }
            }
        }
        let world = cx.episode.world();
        let detail = say_unexpected(&unexpected, |t| world.table_title(t));
        let met = unexpected.is_empty();
        let mut ev = Evidence::detail(detail);
        ev.changes = unexpected;
        (Outcome::Met(met), ev)
    }
}

/// The evidence sentence: the first five records that changed outside the
/// allowed ones, by their tables' on-screen titles, and how many more.
fn say_unexpected(unexpected: &[ChangeRef], title: impl Fn(&str) -> String) -> String {
    if unexpected.is_empty() {
        return "No record changed other than the ones the task allows.".to_string();
    }
    let list: Vec<String> = unexpected
        .iter()
        .take(5)
        .map(|c| format!("{} {} ({})", title(&c.table), c.key, c.change))
        .collect();
    let more = match unexpected.len() - list.len() {
        0 => String::new(),
        n => format!(", and {n} more"),
    };
    format!(
        "{} changed that the task does not allow: {}{more}",
        records(unexpected.len()),
        list.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::say_unexpected;
    use crate::rubric::evaluation::ChangeRef;

    #[test]
    fn unexpected_changes_are_named_by_title_five_at_most_then_counted() {
        let change = |key: usize| ChangeRef {
            table: "ticket_messages".into(),
            key: format!("TM-{key}"),
            change: "added".into(),
        };
        let title = |t: &str| {
            if t == "ticket_messages" {
                "Messages".into()
            } else {
                t.into()
            }
        };
        assert_eq!(
            say_unexpected(&[change(1)], title),
            "1 record changed that the task does not allow: Messages TM-1 (added)"
        );
        let seven: Vec<ChangeRef> = (1..=7).map(change).collect();
        let said = say_unexpected(&seven, title);
        assert!(
            said.starts_with(
                "7 records changed that the task does not allow: Messages TM-1 (added), "
            ),
            "{said}"
        );
        assert!(
            said.ends_with("Messages TM-5 (added), and 2 more"),
            "{said}"
        );
        assert_eq!(
            say_unexpected(&[], title),
            "No record changed other than the ones the task allows."
        );
    }
}
