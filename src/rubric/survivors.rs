//! What lint's survivors mean for an annotator: each mutant or cheat the
//! rubric did not catch, as a sentence ("dropping step 4 (issue_refund)
//! still scores 1.0"), with the criterion that should have caught it, so
//! the editor can open it in one step.

use serde::Serialize;
use serde_json::Value;

use super::criterion::CriterionKind;
use super::lint::{MutantResult, TaskLint};
use super::mutations::MutantKind;
use super::Rubric;

/// A mutant or cheat the rubric let through.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Survivor {
    /// The mutant's id in the lint report, e.g. `drop:4`.
    pub mutant_id: String,
    /// The class's report name (`drop-step`, `stuffing`, …).
    pub class: String,
    /// What got through, in a sentence.
    pub sentence: String,
    /// The criterion to tighten, when one is about this; `None` when no
    /// criterion looks at it yet (add one).
    pub criterion: Option<String>,
    /// Listed only: an equivalent mutant (it ends where gold ends), with why.
    pub equivalent: Option<String>,
}

/// The survivors of a task's lint (equivalent mutants last).
pub fn survivors(rubric: &Rubric, lint: &TaskLint) -> Vec<Survivor> {
    let mut out: Vec<Survivor> = lint
        .mutants
        .iter()
        .filter(|m| !m.caught)
        .map(|m| Survivor {
            mutant_id: m.id.clone(),
            class: m.kind.name().to_string(),
            sentence: sentence(m),
            criterion: should_catch(rubric, m),
            equivalent: m.equivalent_reason.clone(),
        })
        .collect();
    out.sort_by_key(|s| s.equivalent.is_some());
    out
}

/// "dropping step 4 (issue_refund) still scores 1.0".
pub fn sentence(m: &MutantResult) -> String {
    let d = m.description.as_str();
    let what = match m.kind {
        MutantKind::DropStep => format!("dropping {}", d.trim_end_matches(" dropped")),
        MutantKind::DropFinalMessage => {
            format!("leaving out the {}", d.trim_end_matches(" dropped"))
        }
        MutantKind::Perturb => match d.split_once(": ") {
            Some((step, change)) => format!("{step} with {}", instead(change)),
            None => d.to_string(),
        },
        MutantKind::Forbidden => format!("adding the {}", d.trim_start_matches("forbidden ").replacen(" added", "", 1)),
        MutantKind::Stuffing if m.id == "stuffing:alone" => "a message that lists every amount from $1 to $300, every count to 300 and a date every week for two years, with nothing else done,".to_string(),
        MutantKind::Stuffing => "doing gold's work but replacing its messages with a list of every amount from $1 to $300, every count and a date every week,".to_string(),
        MutantKind::Spray => match d.split_once(" said among wrong ones") {
            Some((head, _)) => format!("saying {} among seven wrong ones", after_step(head)),
            None => match d.split_once(" said as a range, ") {
                Some((head, range)) => format!("saying {} only as a range ({range})", after_step(head)),
                None => d.to_string(),
            },
        },
        MutantKind::NearMiss => match d.split_once(" said as ") {
            Some((head, rest)) => {
                let near = rest.split(" (off by").next().unwrap_or(rest);
                format!("saying {near} instead of {}", after_step(head))
            }
            None => match d.split_once(": ") {
                Some((step, change)) => format!("{step} with {}", instead(change)),
                None => d.to_string(),
            },
        },
        _ => d.to_string(),
    };
    let result = if m.pass == Some(true) {
        format!("still passes (scores {})", number(m.range[1]))
    } else {
        format!("still scores {}", number(m.range[1]))
    };
    format!("{what} {result}")
}

/// "amount 79.0 → 80.0" → "amount 80.0 instead of 79.0".
fn instead(change: &str) -> String {
    match change.split_once(" → ") {
        Some((old, new)) => match old.rsplit_once(' ') {
            Some((name, old)) if !name.contains(' ') => format!("{name} {new} instead of {old}"),
            _ => format!("{new} instead of {old}"),
        },
        None => change.to_string(),
    }
}

/// "step 6: $79.00" → "$79.00".
fn after_step(head: &str) -> &str {
    head.split_once(": ").map(|(_, v)| v).unwrap_or(head)
}

fn number(x: f64) -> String {
    if ((x * 10.0).round() - x * 10.0).abs() < 1e-9 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The tool a mutant's description names: "step 4 (issue_refund) …" or
/// "forbidden apply_credit {…}".
fn tool_of(m: &MutantResult) -> Option<String> {
    let d = &m.description;
    if let Some(rest) = d.strip_prefix("forbidden ") {
        return rest.split_whitespace().next().map(str::to_string);
    }
    let start = d.find('(')? + 1;
    let end = start + d[start..].find(')')?;
    let t = &d[start..end];
    t.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then(|| t.to_string())
        .or_else(|| d.split_whitespace().next().map(str::to_string))
}

/// The criterion that should have caught `m`: one looking at what it did.
pub fn should_catch(rubric: &Rubric, m: &MutantResult) -> Option<String> {
    let crit = |pred: &dyn Fn(&super::Criterion) -> bool| {
        rubric
            .criteria
            .iter()
            .find(|c| pred(c))
            .map(|c| c.id.clone())
    };
    let tool_is =
        |c: &super::Criterion, tool: &str| c.spec.get("tool").and_then(Value::as_str) == Some(tool);
    let scope = |check: &str| {
        crit(&|c| {
            c.kind == CriterionKind::Scope
                && c.spec.get("check").and_then(Value::as_str) == Some(check)
        })
    };
    let says =
        |c: &super::Criterion| c.kind == CriterionKind::Message && (c.points > 0.0 || c.gate);
    match m.kind {
        MutantKind::DroppedRead => m.id.strip_prefix("dropped-read:").map(str::to_string),
        MutantKind::Disclosure => scope("disclosure"),
        MutantKind::RefusedAttempt => scope("writes").or_else(|| {
            let tool = tool_of(m)?;
            crit(&|c| c.points < 0.0 && tool_is(c, &tool))
        }),
        MutantKind::Stuffing | MutantKind::Spray | MutantKind::DropFinalMessage => {
            crit(&|c| says(c) && m.description.contains(&value_text(c))).or_else(|| crit(&says))
        }
        MutantKind::NearMiss if !m.description.contains(") ") => {
            crit(&|c| says(c) && m.description.contains(&value_text(c))).or_else(|| crit(&says))
        }
        MutantKind::Forbidden => {
            let tool = tool_of(m);
            tool.and_then(|t| crit(&|c| c.points < 0.0 && tool_is(c, &t)))
                .or_else(|| crit(&|c| c.gate && c.spec.get("changes").is_some()))
        }
        _ => {
            let tool = tool_of(m);
            let on_its_table = |c: &super::Criterion, tool: &str| {
                c.kind == CriterionKind::State
                    && c.points > 0.0
                    && query_table(c).is_some_and(|t| writes_to(tool, &t))
            };
            // A wrong value in one argument is for the criterion reading
            // that field of the record the tool writes, if there is one.
            let field = perturbed_field(m);
            let reads_field = |c: &super::Criterion, f: &str| {
                c.spec
                    .get("query")
                    .and_then(Value::as_str)
                    .is_some_and(|q| {
                        q.split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
                            .any(|w| w == f)
                    })
            };
            tool.as_deref()
                .and_then(|t| crit(&|c| c.points > 0.0 && tool_is(c, t)))
                .or_else(|| {
                    let (t, f) = (tool.as_deref()?, field?);
                    crit(&|c| on_its_table(c, t) && reads_field(c, f))
                })
                .or_else(|| tool.as_deref().and_then(|t| crit(&|c| on_its_table(c, t))))
                .or_else(|| {
                    crit(&|c| {
                        c.kind == CriterionKind::State
                            && c.points > 0.0
                            && c.spec.get("query").is_some()
                    })
                })
                .or_else(|| crit(&|c| c.kind == CriterionKind::State))
        }
    }
}

/// The table a state criterion's query reads (`FROM "refunds"`).
fn query_table(c: &super::Criterion) -> Option<String> {
    let q = c.spec.get("query")?.as_str()?.to_lowercase();
    let rest = &q[q.find(" from ")? + 6..];
    let t: String = rest
        .trim_start()
        .trim_start_matches('"')
        .chars()
        .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
        .collect();
    (!t.is_empty()).then_some(t)
}

/// The argument a perturbed step changed: "step 7 (close_ticket):
/// resolution \"x\" → …" → `resolution`.
fn perturbed_field(m: &MutantResult) -> Option<&str> {
    if m.kind != MutantKind::Perturb {
        return None;
    }
    let (_, change) = m.description.split_once("): ")?;
    change.split_whitespace().next()
}

/// Whether a tool's name says it writes to `table`: `issue_refund` →
/// `refunds`, `close_ticket` → `tickets`, `request_client_information` →
/// `info_requests`. Each word of the table's singular name must begin a
/// word of the tool's ("info" begins "information").
fn writes_to(tool: &str, table: &str) -> bool {
    let singular = table.strip_suffix('s').unwrap_or(table);
    let tool_words: Vec<&str> = tool.split('_').collect();
    tool_words.contains(&table)
        || singular
            .split('_')
            .all(|w| !w.is_empty() && tool_words.iter().any(|t| t.starts_with(w)))
}

/// The value a message criterion looks for, as text ("79", "INV-24073").
fn value_text(c: &super::Criterion) -> String {
    ["number", "contains", "date"]
        .iter()
        .find_map(|k| c.spec.get(*k))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n
                .as_f64()
                .map(|x| {
                    if x.fract() == 0.0 {
                        format!("{}", x as i64)
                    } else {
                        x.to_string()
                    }
                })
                .unwrap_or_default(),
            other => other.to_string(),
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "\u{0}".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric::lint::{lint_rubric, LintOptions, LintProgress};
    use crate::World;
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    fn mutant(
        kind: MutantKind,
        id: &str,
        description: &str,
        pass: Option<bool>,
        hi: f64,
    ) -> MutantResult {
        MutantResult {
            id: id.into(),
            kind,
            description: description.into(),
            range: [hi, hi],
            caught: false,
            equivalent: false,
            equivalent_reason: None,
            pass,
            noticed_by: Vec::new(),
        }
    }

    #[test]
    fn survivors_read_as_sentences() {
        assert_eq!(
            sentence(&mutant(
                MutantKind::DropStep,
                "drop:3",
                "step 4 (issue_refund) dropped",
                Some(true),
                1.0
            )),
            "dropping step 4 (issue_refund) still passes (scores 1.0)"
        );
        assert_eq!(
            sentence(&mutant(
                MutantKind::Perturb,
                "arg:3:amount:+1",
                "step 4 (issue_refund): amount 79.0 → 80.0",
                Some(false),
                0.75
            )),
            "step 4 (issue_refund) with amount 80.0 instead of 79.0 still scores 0.75"
        );
        assert_eq!(
            sentence(&mutant(
                MutantKind::NearMiss,
                "near-miss:x",
                "step 6: $79.00 said as $79.01 (off by 0.01)",
                Some(true),
                1.0
            )),
            "saying $79.01 instead of $79.00 still passes (scores 1.0)"
        );
        assert_eq!(
            sentence(&mutant(
                MutantKind::Spray,
                "spray:x",
                "step 6: $79.00 said among wrong ones: $1.00, …",
                Some(true),
                1.0
            )),
            "saying $79.00 among seven wrong ones still passes (scores 1.0)"
        );
        assert!(sentence(&mutant(
            MutantKind::Stuffing,
            "stuffing:alone",
            "stuffing alone",
            Some(false),
            0.2
        ))
        .starts_with("a message that lists every amount from $1 to $300"));
        assert_eq!(
            sentence(&mutant(
                MutantKind::DropFinalMessage,
                "drop-message:5",
                "final message (step 6) dropped",
                None,
                1.0
            )),
            "leaving out the final message (step 6) still scores 1.0"
        );
        assert_eq!(
            sentence(&mutant(
                MutantKind::Forbidden,
                "forbidden:1",
                "forbidden apply_credit {\"amount\":20} added at the end (SOP 3.3)",
                Some(false),
                1.0
            )),
            "adding the apply_credit {\"amount\":20} at the end (SOP 3.3) still scores 1.0"
        );
    }

    fn desk() -> Arc<World> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/worlds/support-desk");
        Arc::new(World::load(&root).expect("support-desk loads"))
    }

    #[test]
    fn lint_of_one_rubric_reports_progress_and_names_the_criterion_to_tighten() {
        let world = desk();
        let rubric = Rubric::load(&world, "duplicate-charge")
            .expect("loads")
            .expect("exists");
        let seen = Mutex::new(Vec::<LintProgress>::new());
        let lint = lint_rubric(
            &world,
            Arc::clone(&rubric),
            None,
            &LintOptions::default(),
            &|p| seen.lock().unwrap().push(p),
        )
        .expect("lints");
        assert!(lint.ok, "{:?}", lint.problems);
        let seen = seen.into_inner().unwrap();
        let last = *seen.last().expect("progress reported");
        // Gold, doing nothing and every mutant each report once.
        assert_eq!(last.done, last.total);
        // Detours that do not end in gold's state are replayed, not kept.
        assert!(
            last.total >= lint.gold.len() + 1 + lint.mutants.len(),
            "{last:?}"
        );
        assert!(seen.windows(2).all(|w| w[0].done <= w[1].done), "{seen:?}");
        assert!(
            seen.len() > 5,
            "progress comes run by run, not only at the end"
        );
        assert!(survivors(&rubric, &lint).is_empty());

        // Without the criteria that notice a dropped refund, one survives,
        // and the sentence says which step and what it still scores.
        let mut r = (*rubric).clone();
        r.criteria.retain(|c| {
            ![
                "extra-charge-refunded",
                "only-the-extra-charge",
                "refund-reason",
                "checked-invoice-first",
            ]
            .contains(&c.id.as_str())
        });
        let lint = lint_rubric(
            &world,
            Arc::new(r.clone()),
            None,
            &LintOptions::default(),
            &|_| {},
        )
        .expect("lints");
        let left = survivors(&r, &lint);
        let drop = left
            .iter()
            .find(|s| s.class == "drop-step" && s.sentence.contains("(issue_refund)"))
            .unwrap_or_else(|| panic!("a dropped refund survives: {left:#?}"));
        assert!(
            drop.sentence.starts_with("dropping step "),
            "{}",
            drop.sentence
        );
        assert!(drop.criterion.is_some(), "{drop:?}");
        assert!(r
            .criterion(drop.criterion.as_deref().unwrap_or_default())
            .is_some());
    }

    #[test]
    fn the_criterion_for_each_class() {
        let world = desk();
        let rubric = Rubric::load(&world, "duplicate-charge")
            .expect("loads")
            .expect("exists");
        let m = |kind, id: &str, d: &str| should_catch(&rubric, &mutant(kind, id, d, None, 1.0));
        assert_eq!(
            m(MutantKind::Disclosure, "disclosure:1", "tells").as_deref(),
            Some("disclosed-another-customer")
        );
        assert_eq!(
            m(
                MutantKind::RefusedAttempt,
                "x",
                "issue_refund on invoices INV-1"
            )
            .as_deref(),
            Some("outside-subject-writes")
        );
        assert_eq!(
            m(
                MutantKind::NearMiss,
                "near-miss:x",
                "step 6: $79.00 said as $79.01 (off by 0.01)"
            )
            .as_deref(),
            Some("told-amount")
        );
        assert_eq!(
            m(
                MutantKind::Spray,
                "spray:x",
                "step 6: INV-24073 said among wrong ones: …"
            )
            .as_deref(),
            Some("told-invoice")
        );
        assert_eq!(
            m(
                MutantKind::Forbidden,
                "forbidden:1",
                "forbidden apply_credit {} added at the end"
            )
            .as_deref(),
            Some("credit-on-top")
        );
        assert_eq!(
            m(
                MutantKind::DropStep,
                "drop:3",
                "step 4 (issue_refund) dropped"
            )
            .as_deref(),
            Some("checked-invoice-first")
        );
        assert_eq!(
            m(
                MutantKind::DroppedRead,
                "dropped-read:checked-invoice-first",
                "…"
            )
            .as_deref(),
            Some("checked-invoice-first")
        );
        // A wrong value in a step is for the criterion on the record that
        // tool writes, the one reading that field: close_ticket's resolution
        // → the ticket's resolution, and its other fields → the ticket's
        // first criterion.
        assert_eq!(
            m(
                MutantKind::Perturb,
                "arg:6:resolution:text",
                "step 7 (close_ticket): resolution \"x\" → \"Handled as requested.\""
            )
            .as_deref(),
            Some("resolution-recorded")
        );
        assert_eq!(
            m(
                MutantKind::Perturb,
                "arg:6:ticket_id:text",
                "step 7 (close_ticket): ticket_id \"T-1042\" → \"T-1043\""
            )
            .as_deref(),
            Some("ticket-closed")
        );
        assert!(writes_to("issue_refund", "refunds") && !writes_to("issue_refund", "invoices"));
        assert!(writes_to("request_client_information", "info_requests"));
        assert!(!writes_to("request_client_information", "clause_reviews"));
    }

    /// Contract review: questions to the client changed is for a criterion
    /// on the info request's questions, not the first state criterion of
    /// the rubric (which is about the clause review).
    #[test]
    fn a_changed_argument_points_at_the_criterion_reading_that_field() {
        let world = Arc::new(
            World::load(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/worlds/contract-review"),
            )
            .expect("contract-review loads"),
        );
        let rubric = Rubric::load(&world, "phi-offshore-info-request")
            .expect("loads")
            .expect("exists");
        let m = mutant(
            MutantKind::Perturb,
            "arg:3:questions:text",
            "step 4 (request_client_information): questions \"Is PHI…\" → \"x\"",
            None,
            1.0,
        );
        assert_eq!(
            should_catch(&rubric, &m).as_deref(),
            Some("asked-about-phi")
        );
        let other = mutant(
            MutantKind::Perturb,
            "arg:3:due:text",
            "step 4 (request_client_information): due_date \"2025-01-01\" → \"x\"",
            None,
            1.0,
        );
        assert_eq!(
            should_catch(&rubric, &other).as_deref(),
            Some("asked-client")
        );
    }
}
