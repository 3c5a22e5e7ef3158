//! `kind = "judged"`: graded by a person in the app or by a judge command
//! (run by `judge.rs`; only the grades, `Judgment`s, reach this file);
//! pending until then, never guessed.
//!
//! A judged criterion is met or not met, unless it has a `scale`: a few
//! levels, each a label and the points it earns ("Clear and kind" 2,
//! "Clear but curt" 1, "Unclear" 0). A grade then names a level and earns
//! its points; it counts as met when it earns any points of the
//! criterion's sign (so a positive criterion graded at a 0-point level is
//! not met, and `pass` reads it that way).

use crate::rubric::evaluation::{Context, Evidence, Outcome};
use crate::rubric::format::CriterionToml;
use crate::rubric::judgment::Judgment;
use crate::rubric::kinds::compile::CompileCx;
use crate::rubric::matchers::as_f64;

/// The fields a judged criterion may set.
pub(crate) const FIELDS: &[&str] = &["guidance", "scale"];

/// One level of a judged criterion's scale.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ScaleLevel {
    /// What the grader picks, e.g. "Clear but curt".
    pub label: String,
    /// The points a grade at this level earns.
    pub points: f64,
}

#[derive(Debug, Clone)]
pub(crate) struct JudgedCheck {
    /// Instructions for whoever grades it.
    pub guidance: String,
    /// The levels it is graded on; empty: met or not met.
    pub scale: Vec<ScaleLevel>,
}

impl JudgedCheck {
    /// Compiles the guidance and the scale; every problem of the scale goes
    /// to `cx` with its line.
    pub fn compile(c: &CriterionToml, cx: &mut CompileCx<'_, '_>) -> Option<JudgedCheck> {
        let points = c.points.as_ref().and_then(as_f64).unwrap_or(1.0);
        let scale = match &c.scale {
            None => Vec::new(),
            Some(spanned) => {
                let line = Some(cx.line(spanned));
                let before = cx.problems.len();
                let levels = scale_levels(spanned.get_ref(), points, &mut |m| cx.problem(line, m));
                if cx.problems.len() > before {
                    return None;
                }
                levels
            }
        };
        Some(JudgedCheck {
            guidance: c.guidance.clone().unwrap_or_default(),
            scale,
        })
    }

    /// What a grade earns and whether it counts as met: on a scale, its
    /// level's points, met when they are of the criterion's sign; else all
    /// points or none. `None` when it names a level the scale does not have.
    pub fn grade(&self, points: f64, j: &Judgment) -> Option<(bool, f64)> {
        match (&j.level, self.scale.is_empty()) {
            (Some(label), false) => {
                let earned = self.scale.iter().find(|l| &l.label == label)?.points;
                let met = if points < 0.0 {
                    earned < 0.0
                } else {
                    earned > 0.0 || points == 0.0
                };
                Some((met, earned))
            }
            _ => Some((j.met, if j.met { points } else { 0.0 })),
        }
    }

    /// The latest stored grade of criterion `id`, if it graded this version
    /// (`hash`) of it.
    pub fn evaluate(
        &self,
        cx: &Context<'_>,
        id: &str,
        hash: &str,
        points: f64,
    ) -> (Outcome, Evidence) {
        let found = cx.judgments.iter().rev().find(|j| j.criterion_id == id);
        match found {
            None => (Outcome::Pending, Evidence::detail("not graded yet: a person or a judge must grade this criterion")),
            Some(j) if j.criterion_hash.as_deref().is_some_and(|h| h != hash) => (
                Outcome::Pending,
                Evidence::detail("the stored judgment graded an earlier version of this criterion; it must be graded again"),
            ),
            Some(j) => match self.grade(points, j) {
                None => (
                    Outcome::Pending,
                    Evidence::detail(format!(
                        "the stored judgment chose the level “{}”, which the scale no longer has; it must be graded again",
                        j.level.as_deref().unwrap_or_default()
                    )),
                ),
                Some((met, earned)) => {
                    let grade = match &j.level {
                        Some(level) if !self.scale.is_empty() => format!("“{level}” ({} points)", num(earned)),
                        _ => (if met { "met" } else { "not met" }).to_string(),
                    };
                    let mut ev = Evidence::detail(format!("graded {grade} by {}: {}", j.judge, j.reason));
                    ev.judgment = Some(j.clone());
                    (Outcome::Met(met), ev)
                }
            },
        }
    }
}

/// Points as people write them: `2`, `1.5`.
fn num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Reads a scale (`[{ label = "…", points = N }, …]`): at least two levels,
/// labels given and distinct, each level's points between 0 and the
/// criterion's points, and one level worth all of them (the best grade
/// earns the criterion's points, as a plain "met" does).
fn scale_levels(
    values: &[toml::Value],
    points: f64,
    problem: &mut dyn FnMut(String),
) -> Vec<ScaleLevel> {
    let mut levels: Vec<ScaleLevel> = Vec::new();
    if values.len() < 2 {
        problem("a scale needs at least two levels, e.g. scale = [{ label = \"Clear\", points = 1 }, { label = \"Unclear\", points = 0 }]".into());
    }
    let (lo, hi) = if points < 0.0 {
        (points, 0.0)
    } else {
        (0.0, points)
    };
    for (i, v) in values.iter().enumerate() {
        let n = i + 1;
        let Some(t) = v.as_table() else {
            problem(format!("scale level {n} must be a table with a label and points, e.g. {{ label = \"Clear\", points = 1 }}"));
            continue;
        };
        if let Some(k) = t.keys().find(|k| *k != "label" && *k != "points") {
            problem(format!("scale level {n} has an unknown field `{k}` (a level has only `label` and `points`)"));
        }
        let label = t
            .get("label")
            .and_then(|l| l.as_str())
            .map(str::trim)
            .unwrap_or_default();
        if label.is_empty() {
            problem(format!(
                "scale level {n} needs a `label`: the words the grader picks"
            ));
        } else if levels.iter().any(|l| l.label == label) {
            problem(format!(
                "scale level {n}: the label “{label}” is used twice"
            ));
        }
        let Some(p) = t.get("points").and_then(as_f64) else {
            problem(format!(
                "scale level {n} (“{label}”) needs `points`, a number"
            ));
            continue;
        };
        if p < lo || p > hi {
            problem(format!(
                "scale level {n} (“{label}”) is worth {}, outside 0 to the criterion's {} points",
                num(p),
                num(points)
            ));
        }
        levels.push(ScaleLevel {
            label: label.to_string(),
            points: p,
        });
    }
    if !levels.is_empty() && !levels.iter().any(|l| l.points == points) {
        problem(format!(
            "no level of the scale is worth the criterion's {} points: the best grade must earn them all",
            num(points)
        ));
    }
    levels
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::error::Error;
    use crate::rubric::{replay_and_score, Judgment, Rubric};
    use crate::{Episode, World};

    fn desk() -> Arc<World> {
        crate::rubric::support_desk()
    }

    /// A rubric of one automatic point and a judged criterion worth 2 on a scale.
    fn rubric(scale: &str) -> Result<Rubric, Error> {
        let text = format!(
            "format = 1\nversion = \"1\"\n\n[[criteria]]\nid = \"closed\"\ndescription = \"The ticket is closed\"\nkind = \"state\"\nquery = \"SELECT status FROM tickets WHERE id = 'T-1042'\"\nexpect = {{ equals = \"closed\" }}\npoints = 1\n\n[[criteria]]\nid = \"tone\"\ndescription = \"Kind and clear\"\nkind = \"judged\"\nguidance = \"How clear and kind is the reply?\"\n{scale}\npoints = 2\n"
        );
        Rubric::from_str(
            &desk(),
            "duplicate-charge",
            "rubrics/duplicate-charge.toml",
            &text,
        )
    }

    const SCALE: &str = "scale = [{ label = \"Clear and kind\", points = 2 }, { label = \"Clear but curt\", points = 1 }, { label = \"Unclear\", points = 0 }]";

    fn grade(level: Option<&str>, met: bool) -> Judgment {
        Judgment {
            criterion_id: "tone".into(),
            criterion_hash: None,
            met,
            reason: "read it".into(),
            judge: "expert-1".into(),
            at: String::new(),
            level: level.map(str::to_string),
        }
    }

    fn problems(scale: &str) -> Vec<(Option<usize>, String)> {
        match rubric(scale) {
            Err(Error::RubricInvalid { problems, .. }) => {
                problems.into_iter().map(|p| (p.line, p.message)).collect()
            }
            other => panic!(
                "expected problems, got {:?}",
                other.map(|r| r.criteria.len())
            ),
        }
    }

    #[test]
    fn a_level_earns_its_points_and_decides_met() {
        let r = rubric(SCALE).expect("compiles");
        let c = r.criterion("tone").expect("judged");
        assert_eq!(c.scale().len(), 3);
        assert_eq!(c.scale()[1].label, "Clear but curt");
        assert_eq!(
            c.graded(&grade(Some("Clear but curt"), false)),
            Some((true, 1.0))
        );
        assert_eq!(
            c.graded(&grade(Some("Unclear"), true)),
            Some((false, 0.0)),
            "0 points is not met, whatever `met` says"
        );
        assert_eq!(c.graded(&grade(Some("Excellent"), true)), None);
        assert_eq!(
            c.graded(&grade(None, true)),
            Some((true, 2.0)),
            "a plain grade is all or nothing"
        );

        // Nothing done: the ticket stays open (0 of 1), so the score is the level's share.
        let mut ep = Episode::new(desk()).expect("episode");
        let s = replay_and_score(&mut ep, &r, 0, &[], &[grade(Some("Clear but curt"), true)])
            .expect("scores");
        assert_eq!(s.value, Some(1.0 / 3.0), "{s:?}");
        let tone = s.criteria.iter().find(|c| c.id == "tone").expect("tone");
        assert_eq!((tone.met, tone.earned), (Some(true), 1.0));
        assert!(
            tone.evidence.detail.contains("“Clear but curt” (1 points)"),
            "{}",
            tone.evidence.detail
        );
        let s = replay_and_score(&mut ep, &r, 0, &[], &[grade(Some("Clear and kind"), true)])
            .expect("scores");
        assert_eq!(s.value, Some(2.0 / 3.0));
        // A level the scale no longer has leaves it pending.
        let s =
            replay_and_score(&mut ep, &r, 0, &[], &[grade(Some("Gone"), true)]).expect("scores");
        assert_eq!(s.value, None);
        assert_eq!(s.pending, ["tone"]);

        // Applying a grade later gives the same as scoring with it.
        let mut later = replay_and_score(&mut ep, &r, 0, &[], &[]).expect("scores");
        assert!(later.apply_judgment(&r, &grade(Some("Clear but curt"), true)));
        assert_eq!(later.value, Some(1.0 / 3.0));
        assert!(!later.apply_judgment(&r, &grade(Some("Gone"), true)));
    }

    #[test]
    fn a_bad_scale_is_refused_with_its_line_and_what_is_wrong() {
        let line = Some(17);
        let one = problems("scale = [{ label = \"Good\", points = 2 }]");
        assert_eq!(one.len(), 1, "{one:?}");
        assert_eq!(one[0].0, line);
        assert!(one[0].1.contains("at least two levels"), "{one:?}");

        let bad = problems("scale = [{ label = \"Good\", points = 3 }, { label = \"Good\", points = 1 }, { points = 0 }, \"meh\", { label = \"x\", points = 1, colour = \"red\" }]");
        let text: Vec<&str> = bad.iter().map(|(_, m)| m.as_str()).collect();
        assert!(bad.iter().all(|(l, _)| *l == line), "{bad:?}");
        assert!(
            text.iter().any(|m| m
                .contains("level 1 (“Good”) is worth 3, outside 0 to the criterion's 2 points")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|m| m.contains("the label “Good” is used twice")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|m| m.contains("level 3 needs a `label`")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|m| m.contains("level 4 must be a table")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|m| m.contains("unknown field `colour`")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|m| m.contains("no level of the scale is worth the criterion's 2 points")),
            "{text:?}"
        );

        let no_points = problems("scale = [{ label = \"Good\", points = 2 }, { label = \"Bad\" }]");
        assert!(
            no_points[0].1.contains("(“Bad”) needs `points`"),
            "{no_points:?}"
        );
        // The message names the file.
        match rubric("scale = [{ label = \"Good\" }]") {
            Err(e) => assert!(
                e.to_string().contains("rubrics/duplicate-charge.toml"),
                "{e}"
            ),
            Ok(_) => panic!("a scale without points compiles"),
        }
    }
}
