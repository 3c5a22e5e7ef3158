//! Dataset export and import: trajectories leave the store in the shapes
//! training code reads as they are, and come back in without loss.
//!
//! Formats (schemas and examples in `docs/formats.md`):
//! - [`Format::Native`]: one `understudy.episode/1` object per line with
//!   everything the store knows (retracted steps kept and marked). It is the
//!   backup and exchange format, and the only one [`import`] reads, so
//!   export → import → export reproduces the same bytes.
//! - [`Format::Trl`]: Hugging Face / TRL conversational rows.
//! - [`Format::OpenAi`]: OpenAI chat fine-tuning rows.
//! - [`Format::Folder`]: a dataset folder (`data/`, `meta/info.json`,
//!   `README.md`) that `datasets.load_dataset(folder)` opens as it is.
//!
//! The training formats need each episode's world for the policy and the
//! tool specs: worlds are looked up by id in a folder of worlds, and an
//! episode whose world or task is gone is refused rather than exported with
//! a guessed prompt.

mod chat;
pub mod folder;
mod import;
pub mod native;
mod openai;
mod request;
pub mod trl;
mod worlds;

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::{EpisodeFilter, EpisodeRecord, EpisodeStatus, Expert, Review, Store};
use crate::trajectory::Trajectory;

pub use import::{import, import_checked, ImportSummary};
pub use request::{count_matching, export_store, ExportProgress, ExportRequest};
pub use worlds::WorldSet;

/// Names this build in `meta/info.json`, so a dataset says what wrote it.
pub(crate) const EXPORTER: &str = concat!("understudy ", env!("CARGO_PKG_VERSION"));

/// The output shapes of `understudy export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Format {
    /// `understudy.episode/1` lines: everything, re-importable.
    Native,
    /// Hugging Face / TRL conversational rows (`messages`, `tools`, ...).
    Trl,
    /// OpenAI chat fine-tuning rows.
    OpenAi,
    /// A dataset folder of TRL rows that `datasets.load_dataset` opens.
    Folder,
}

impl Format {
    /// Only the native format is a faithful dump; the others are built
    /// from the world's policy and tools.
    pub fn needs_worlds(self) -> bool {
        self != Format::Native
    }
}

/// One episode with everything recorded about it: the trajectory, and
/// who performed and reviewed it.
///
/// It dereferences to its [`Trajectory`], so `bundle.record`,
/// `bundle.steps` and `bundle.transcript(..)` read the trajectory's.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeBundle {
    /// The header and every step, retracted ones included.
    pub trajectory: Trajectory,
    /// The expert's profile when the actor is an expert known to the store.
    pub expert: Option<Expert>,
    /// Every review of the episode, in the order they were stored.
    pub reviews: Vec<Review>,
}

impl std::ops::Deref for EpisodeBundle {
    type Target = Trajectory;

    fn deref(&self) -> &Trajectory {
        &self.trajectory
    }
}

/// Which episodes to export. Dates are compared as instants, so episodes
/// imported with any UTC offset filter correctly.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// A world id: only episodes recorded in it.
    pub world: Option<String>,
    /// A task id: only episodes of that task.
    pub task: Option<String>,
    /// Only episodes in this status.
    pub status: Option<EpisodeStatus>,
    /// An expert's id: only episodes that expert performed.
    pub expert: Option<String>,
    /// Only episodes created at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// Only episodes created before this instant.
    pub until: Option<DateTime<Utc>>,
}

impl Filter {
    /// Whether the episode passes every condition that is set. An episode
    /// whose `created_at` does not parse fails any date condition.
    pub fn matches(&self, r: &EpisodeRecord) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        if !eq(&self.world, &r.world_id) || !eq(&self.task, &r.task_id) {
            return false;
        }
        if self.status.is_some_and(|s| s != r.status) {
            return false;
        }
        if let Some(expert) = &self.expert {
            match &r.actor {
                crate::store::Actor::Expert { id } if id == expert => {}
                _ => return false,
            }
        }
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Ok(at) = DateTime::parse_from_rfc3339(&r.created_at).map(|t| t.with_timezone(&Utc))
        else {
            return false;
        };
        self.since.is_none_or(|s| at >= s) && self.until.is_none_or(|u| at < u)
    }

    /// Parses a `--since`/`--until` value: an RFC 3339 time, or a date
    /// (`YYYY-MM-DD`, UTC). A date given as the end of a range means the
    /// whole of that day is included, which is what people mean by
    /// "until March 31".
    pub fn parse_time(parameter: &str, value: &str, end_of_range: bool) -> Result<DateTime<Utc>> {
        if let Ok(t) = DateTime::parse_from_rfc3339(value) {
            return Ok(t.with_timezone(&Utc));
        }
        if let Ok(d) = NaiveDate::parse_from_str(value, "%Y-%m-%d") {
            let day = if end_of_range {
                d.succ_opt().unwrap_or(d)
            } else {
                d
            };
            if let Some(t) = day.and_hms_opt(0, 0, 0) {
                return Ok(t.and_utc());
            }
        }
        Err(Error::Other(format!(
            "{parameter}: `{value}` is not a date; expected YYYY-MM-DD or an RFC 3339 time such as 2025-03-04T09:00:00Z"
        )))
    }

    /// Parses a `--status` value, naming the accepted ones when it is wrong.
    pub fn parse_status(parameter: &str, value: &str) -> Result<EpisodeStatus> {
        EpisodeStatus::parse(value).ok_or_else(|| {
            Error::Other(format!(
                "{parameter}: `{value}` is not an episode status; expected one of {}",
                STATUSES.join(", ")
            ))
        })
    }

    /// The part of the filter the store can apply in SQL; dates are checked
    /// here, as instants.
    fn store_filter(&self) -> EpisodeFilter {
        EpisodeFilter {
            world_id: self.world.clone(),
            task_id: self.task.clone(),
            status: self.status,
            actor_kind: self.expert.as_ref().map(|_| "expert".to_string()),
            actor_id: self.expert.clone(),
            since: None,
            until: None,
        }
    }
}

/// Every episode status, as written in files and on the command line.
pub(crate) const STATUSES: [&str; 6] = [
    "in_progress",
    "paused",
    "submitted",
    "abandoned",
    "approved",
    "rejected",
];

/// How to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The output shape.
    pub format: Format,
    /// Which episodes.
    pub filter: Filter,
    /// Training formats leave undone steps out unless this is set. The
    /// native format always keeps them (marked).
    pub include_retracted: bool,
    /// Rows per data file in a dataset folder.
    pub rows_per_file: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            format: Format::Native,
            filter: Filter::default(),
            include_retracted: false,
            rows_per_file: folder::DEFAULT_ROWS_PER_FILE,
        }
    }
}

/// Where episodes come from: a store, or episodes already in memory (a
/// native JSONL file that was read and validated).
pub enum Source<'a> {
    /// A trajectory store; rewards come from its scores.
    Store(&'a Store),
    /// Episodes already loaded, e.g. by [`native::parse`]; they have no
    /// rewards.
    Episodes(&'a [EpisodeBundle]),
    /// Episodes already loaded with their rewards by episode id, e.g. from
    /// a team hub, which keeps the scores beside the episodes: an episode
    /// missing from the map is exported unscored.
    Scored(&'a [EpisodeBundle], &'a HashMap<String, trl::Reward>),
}

/// An episode picked by the filter; a stored one is loaded only when it is
/// written, so exporting a large store never holds it all in memory.
pub enum Selected<'a> {
    /// From a store: only the header, until it is written.
    Stored(Box<EpisodeRecord>),
    /// From [`Source::Episodes`].
    Loaded(&'a EpisodeBundle),
}

impl Selected<'_> {
    /// The episode's header, whichever way it was selected.
    pub fn record(&self) -> &EpisodeRecord {
        match self {
            Selected::Stored(r) => r,
            Selected::Loaded(b) => &b.record,
        }
    }
}

impl<'a> Source<'a> {
    /// The episodes matching `filter`, oldest first.
    pub fn select(&self, filter: &Filter) -> Result<Vec<Selected<'a>>> {
        match self {
            Source::Store(store) => Ok(store
                .episodes(&filter.store_filter())?
                .into_iter()
                .filter(|r| filter.matches(r))
                .map(|r| Selected::Stored(Box::new(r)))
                .collect()),
            Source::Episodes(list) | Source::Scored(list, _) => Ok(list
                .iter()
                .filter(|b| filter.matches(&b.record))
                .map(Selected::Loaded)
                .collect()),
        }
    }

    /// The store, when there is one (rewards live there).
    pub(crate) fn store(&self) -> Option<&'a Store> {
        match self {
            Source::Store(s) => Some(s),
            Source::Episodes(_) | Source::Scored(..) => None,
        }
    }

    /// An episode's reward column: from the store's latest score, or the
    /// map given with [`Source::Scored`].
    fn reward(&self, episode_id: &str) -> trl::Reward {
        match self {
            Source::Store(s) => match s.latest_score(episode_id).ok().flatten() {
                Some(score) => reward_of(&score),
                None => trl::Reward::default(),
            },
            Source::Episodes(_) => trl::Reward::default(),
            Source::Scored(_, rewards) => rewards.get(episode_id).copied().unwrap_or_default(),
        }
    }
}

/// Loads whole episodes from a store, remembering expert profiles.
struct Loader<'a> {
    store: Option<&'a Store>,
    experts: HashMap<String, Option<Expert>>,
}

impl<'a> Loader<'a> {
    fn new(store: Option<&'a Store>) -> Self {
        Loader {
            store,
            experts: HashMap::new(),
        }
    }

    fn load<'b>(&mut self, selected: &'b Selected<'b>) -> Result<Cow<'b, EpisodeBundle>> {
        let (store, record) = match (selected, self.store) {
            (Selected::Loaded(b), _) => return Ok(Cow::Borrowed(*b)),
            (Selected::Stored(r), Some(s)) => (s, r),
            (Selected::Stored(r), None) => {
                return Err(Error::NotFound(format!("episode {}", r.id)))
            }
        };
        let expert = match &record.actor {
            crate::store::Actor::Expert { id } => match self.experts.get(id) {
                Some(e) => e.clone(),
                None => {
                    let e = match store.expert(id) {
                        Ok(e) => Some(e),
                        Err(Error::NotFound(_)) => None,
                        Err(e) => return Err(e),
                    };
                    self.experts.insert(id.clone(), e.clone());
                    e
                }
            },
            crate::store::Actor::Agent { .. } => None,
        };
        Ok(Cow::Owned(EpisodeBundle {
            trajectory: Trajectory {
                record: EpisodeRecord::clone(record),
                steps: store.steps(&record.id)?,
            },
            expert,
            reviews: store.reviews(&record.id)?,
        }))
    }
}

/// The reward column of the training formats, from an episode's latest
/// score.
///
/// Rewards come from rubric scores, which the scoring work keeps in the
/// store's `scores` table (see `Store::latest_score`). A score still
/// waiting for a judged criterion has no value and is exported as `None`
/// (null) rather than a guess, as is an episode never scored; a store that
/// cannot be read gives `None` too, since a reward column is no reason to
/// fail a whole export. The pass beside it: whether the score passed
/// (every gate and required criterion right), `None` when pending or
/// scored before scores carried a pass.
pub fn reward_of(score: &crate::store::StoredScore) -> trl::Reward {
    let detail: Option<serde_json::Value> = serde_json::from_str(&score.record.detail).ok();
    trl::Reward {
        value: score.record.value,
        pass: detail
            .as_ref()
            .and_then(|d| d.get("pass"))
            .and_then(serde_json::Value::as_bool),
    }
}

/// The pass column of an episode in a store (see [`reward_of`]).
pub fn pass_for(store: &Store, episode_id: &str) -> Option<bool> {
    let stored = store.latest_score(episode_id).ok().flatten()?;
    reward_of(&stored).pass
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExportSummary {
    /// Episodes written (one line or row each).
    pub episodes: usize,
    /// Steps written: all of them for the native format, the kept ones (or
    /// all, with `include_retracted`) for the training formats.
    pub steps: usize,
    /// Files written, relative to the output folder for a dataset folder.
    pub files: Vec<PathBuf>,
    /// Problems worth telling the user that did not stop the export, e.g.
    /// an episode recorded in an older version of its world.
    pub warnings: Vec<String>,
    /// Episodes the training formats left out: nothing in them to train on
    /// (no assistant turn), so a row would only teach the model to stop.
    pub left_out: usize,
}

/// How many left-out episodes the warning names before "and n more".
const LEFT_OUT_NAMED: usize = 5;

/// Picks the episodes, checks their worlds (for the formats that need
/// them), and writes one JSONL line per episode to `out`.
/// `worlds` may be `None` only for [`Format::Native`].
/// `progress` is called after each episode.
pub fn write_jsonl(
    source: &Source<'_>,
    worlds: Option<&WorldSet>,
    options: &ExportOptions,
    out: &mut dyn Write,
    progress: &dyn Fn(),
) -> Result<ExportSummary> {
    let summary = write_rows(
        source,
        worlds,
        options,
        &mut |line, _| {
            out.write_all(line)
                .map_err(|e| io_error("writing the export", e))
        },
        progress,
    )?;
    out.flush().map_err(|e| io_error("writing the export", e))?;
    Ok(summary)
}

/// The export loop: each selected episode becomes one line (newline
/// included) handed to `sink` with its header.
fn write_rows(
    source: &Source<'_>,
    worlds: Option<&WorldSet>,
    options: &ExportOptions,
    sink: &mut dyn FnMut(&[u8], &EpisodeRecord) -> Result<()>,
    progress: &dyn Fn(),
) -> Result<ExportSummary> {
    let selected = source.select(&options.filter)?;
    let mut summary = ExportSummary::default();
    let worlds = prepare_worlds(options.format, worlds, &selected, &mut summary)?;
    let mut loader = Loader::new(source.store());
    let mut tools = chat::ToolCache::default();
    let mut line = Vec::with_capacity(64 * 1024);
    let mut left_out = Vec::new();
    for sel in &selected {
        let bundle = loader.load(sel)?;
        line.clear();
        let steps = match options.format {
            Format::Native => Some(native::write_line(&bundle, &mut line)?),
            Format::Trl | Format::Folder => {
                let reward = source.reward(&bundle.record.id);
                trl::write_row(
                    &bundle,
                    worlds_for(worlds)?,
                    &mut tools,
                    reward,
                    options.include_retracted,
                    &mut line,
                )?
            }
            Format::OpenAi => openai::write_row(
                &bundle,
                worlds_for(worlds)?,
                &mut tools,
                options.include_retracted,
                &mut line,
            )?,
        };
        progress();
        let Some(steps) = steps else {
            left_out.push(bundle.record.id.clone());
            continue;
        };
        line.push(b'\n');
        sink(&line, &bundle.record)?;
        summary.steps += steps;
        summary.episodes += 1;
    }
    if !left_out.is_empty() {
        summary.left_out = left_out.len();
        summary.warnings.push(left_out_warning(&left_out));
    }
    Ok(summary)
}

/// "left out 3 episodes with nothing to train on (no assistant turn): a, b, c".
fn left_out_warning(ids: &[String]) -> String {
    let named = ids
        .iter()
        .take(LEFT_OUT_NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let more = ids.len().saturating_sub(LEFT_OUT_NAMED);
    format!(
        "left out {} episode{} with nothing to train on (no assistant turn): {named}{}",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

fn worlds_for(worlds: Option<&WorldSet>) -> Result<&WorldSet> {
    worlds.ok_or_else(|| {
        Error::Other("this export format needs the episodes' worlds (--worlds)".into())
    })
}

/// Refuses episodes whose world or task is missing; warns once per world
/// version whose content changed since recording.
fn prepare_worlds<'w>(
    format: Format,
    worlds: Option<&'w WorldSet>,
    selected: &[Selected<'_>],
    summary: &mut ExportSummary,
) -> Result<Option<&'w WorldSet>> {
    if !format.needs_worlds() {
        return Ok(worlds);
    }
    let set = worlds_for(worlds)?;
    let check = set.check(
        selected
            .iter()
            .map(|s| (s.record(), format!("episode {}", s.record().id))),
    );
    if !check.problems.is_empty() {
        return Err(Error::Other(format!(
            "cannot export {} episode(s) whose world or task is missing (in {}):\n{}",
            check.problems.len(),
            set.dir().display(),
            check
                .problems
                .iter()
                .map(|p| format!("  - {p}"))
                .collect::<Vec<_>>()
                .join("\n")
        )));
    }
    summary.warnings.extend(check.warnings);
    Ok(Some(set))
}

/// Exports to a file or dataset folder. The output appears only when
/// complete: a failure midway leaves whatever was there before untouched.
pub fn export_to_path(
    source: &Source<'_>,
    worlds: Option<&WorldSet>,
    options: &ExportOptions,
    output: &Path,
    progress: &dyn Fn(),
) -> Result<ExportSummary> {
    if options.format == Format::Folder {
        return folder::write(source, worlds, options, output, progress);
    }
    let mut summary = crate::output_file::write_with(output, |out| {
        write_jsonl(source, worlds, options, out, progress)
    })?;
    summary.files.push(output.to_path_buf());
    Ok(summary)
}

pub(crate) use crate::error::io_error;
