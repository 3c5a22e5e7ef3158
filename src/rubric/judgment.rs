//! A grade a person or a judge command gave a judged criterion. Scoring
//! reads it (the judged kind, evidence), the judge command produces it, and
//! the store keeps it; it depends on nothing else of the rubric.

use serde::{Deserialize, Serialize};

/// A grade for one judged criterion of one episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Judgment {
    /// Id of the graded criterion in the episode's rubric.
    pub criterion_id: String,
    /// The criterion's hash when it was graded; a judgment of an edited
    /// criterion no longer counts. `None` applies to any version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criterion_hash: Option<String>,
    /// The grade: whether the criterion was met (for a negative criterion,
    /// whether the bad thing happened).
    pub met: bool,
    /// Why, in the grader's words; the score shows it as the criterion's
    /// evidence.
    pub reason: String,
    /// Who graded: an expert id, or `command:<program>` for a judge command.
    pub judge: String,
    /// When it was graded, as RFC 3339 UTC text; empty when the input did not
    /// say.
    #[serde(default)]
    pub at: String,
    /// The level of the criterion's `scale` it was graded at (its label),
    /// when the criterion has a scale; it then earns that level's points.
    /// `None` is a plain met / not met grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
}
