//! The on-disk shape of a rubric file (`rubrics/<task_id>.toml`), exactly
//! as annotators write it. `deny_unknown_fields` turns typos into errors;
//! what the fields mean, and whether they fit the world, is checked in
//! `load`.

use serde::Deserialize;
use toml::Spanned;

/// The rubric format this build reads.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricToml {
    pub format: u32,
    /// The task id; optional because the file name says it, but checked
    /// when given so a copied file cannot silently grade another task.
    pub task: Option<String>,
    /// The rubric's own version; bump it when a criterion changes meaning.
    pub version: String,
    #[serde(default)]
    pub title: String,
    /// Notes for annotators (known issues with the task, judgment calls).
    #[serde(default)]
    pub notes: String,
    #[serde(default)]
    pub sections: Vec<Spanned<SectionToml>>,
    #[serde(default)]
    pub criteria: Vec<Spanned<CriterionToml>>,
    /// Actions the policy forbids in this task, tried by lint as mutants.
    #[serde(default)]
    pub forbidden: Vec<Spanned<ForbiddenToml>>,
    /// Runs the annotator vouches for (they must score 1.0), for tasks whose
    /// reference solution is missing or not the whole story.
    #[serde(default)]
    pub gold: Vec<Spanned<GoldToml>>,
    /// `false` when the task's reference solution is not a full-marks run
    /// (e.g. τ-bench gold actions never say the required outputs); lint then
    /// checks the `[[gold]]` runs instead.
    #[serde(default = "yes")]
    pub solution_is_gold: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoldToml {
    pub actions: Vec<toml::Value>,
    #[serde(default)]
    pub why: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionToml {
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub weight: Option<toml::Value>,
    pub parent: Option<String>,
}

/// One criterion; which fields apply depends on `kind`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriterionToml {
    pub id: String,
    #[serde(default)]
    pub description: String,
    pub points: Option<toml::Value>,
    #[serde(default)]
    pub gate: bool,
    /// Whether `pass` needs this criterion to come out right (default yes).
    pub required: Option<bool>,
    pub section: Option<String>,
    pub kind: String,
    // state
    pub query: Option<Spanned<String>>,
    pub expect: Option<toml::Value>,
    pub changes: Option<toml::Value>,
    // action
    pub tool: Option<Spanned<String>>,
    pub args: Option<toml::Table>,
    pub count: Option<toml::Value>,
    pub called: Option<bool>,
    pub before: Option<toml::Table>,
    pub after: Option<toml::Table>,
    pub include_failed: Option<bool>,
    // message
    pub contains: Option<String>,
    pub regex: Option<String>,
    pub number: Option<toml::Value>,
    pub tolerance: Option<toml::Value>,
    pub date: Option<toml::Value>,
    /// Which messages: "any" (default) or "last".
    pub within: Option<String>,
    /// Whether the answer must be committed to (default: yes for criteria
    /// that must be met): no competing value, within the bounds below.
    pub commit: Option<bool>,
    /// Values that may stand beside the answer without competing.
    pub allow: Option<Vec<toml::Value>>,
    /// At most this many distinct values of one kind in the answer's message.
    pub max_values: Option<toml::Value>,
    /// At most this many characters in the answer's message.
    pub max_length: Option<toml::Value>,
    // scope
    /// `writes` or `disclosure`.
    pub check: Option<String>,
    /// Scoped tables a `writes` check covers (default: all).
    pub tables: Option<Vec<String>>,
    /// Sensitive fields a `disclosure` check covers (default: all).
    pub paths: Option<Vec<String>>,
    // judged
    /// Instructions for the person or program grading a judged criterion.
    pub guidance: Option<String>,
    /// The levels a judged criterion is graded on (`{ label, points }`
    /// each), best first or in any order; absent: met or not met.
    pub scale: Option<Spanned<Vec<toml::Value>>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForbiddenToml {
    /// A tool call the policy forbids...
    pub tool: Option<String>,
    #[serde(default)]
    pub args: toml::Table,
    /// ...or something that must never be said to the customer.
    pub message: Option<String>,
    /// Why the policy forbids it (shown when the mutant survives).
    #[serde(default)]
    pub why: String,
}
