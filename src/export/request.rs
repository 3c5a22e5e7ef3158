//! An export as a person asks for it in the app: a format, filters written
//! as text (the same values `understudy export` takes on its command line),
//! and a destination; run with progress that knows its total.
//!
//! The app and the command line must write the same bytes for the same
//! filters, so the text is read by the same parsers as the command line's
//! flags ([`Filter::parse_time`], [`Filter::parse_status`]) and the worlds
//! are found the same way (by id, in a folder of worlds, only those the
//! selected episodes need). Only the wording of errors differs: a person in
//! the app never typed `--since`.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{
    export_to_path, folder, ExportOptions, ExportSummary, Filter, Format, Source, WorldSet,
};
use crate::error::{Error, Result};
use crate::store::Store;

/// What to export, with every filter as text; an empty or missing filter
/// means "any".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExportRequest {
    /// The output shape.
    pub format: Format,
    /// A world id.
    #[serde(default)]
    pub world: Option<String>,
    /// A task id.
    #[serde(default)]
    pub task: Option<String>,
    /// An episode status (`approved`, `submitted`, ...).
    #[serde(default)]
    pub status: Option<String>,
    /// An expert's id.
    #[serde(default)]
    pub expert: Option<String>,
    /// The first day (`YYYY-MM-DD`) or instant (RFC 3339) included.
    #[serde(default)]
    pub since: Option<String>,
    /// The last day included (a plain date includes that whole day), or
    /// the instant the range ends before.
    #[serde(default)]
    pub until: Option<String>,
    /// Keep undone steps (training formats only).
    #[serde(default)]
    pub include_retracted: bool,
    /// Rows per data file (dataset folder only); the default when missing.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub rows_per_file: Option<usize>,
}

impl ExportRequest {
    /// A request for every episode in `format`.
    pub fn new(format: Format) -> ExportRequest {
        ExportRequest {
            format,
            world: None,
            task: None,
            status: None,
            expert: None,
            since: None,
            until: None,
            include_retracted: false,
            rows_per_file: None,
        }
    }

    /// The options `understudy export` builds from the same values, or what
    /// is wrong with them in plain words.
    pub fn options(&self) -> Result<ExportOptions> {
        if self.include_retracted && self.format == Format::Native {
            return Err(Error::Other(
                "The full backup always keeps undone steps (marked); \"include undone steps\" applies only to the training formats.".into(),
            ));
        }
        if self.rows_per_file.is_some() && self.format != Format::Folder {
            return Err(Error::Other(
                "Rows per file applies only to a dataset folder.".into(),
            ));
        }
        if self.rows_per_file == Some(0) {
            return Err(Error::Other("Rows per file must be at least 1.".into()));
        }
        let filter = Filter {
            world: text(&self.world).map(str::to_string),
            task: text(&self.task).map(str::to_string),
            status: text(&self.status)
                .map(|s| Filter::parse_status("the status", s))
                .transpose()?,
            expert: text(&self.expert).map(str::to_string),
            since: text(&self.since)
                .map(|s| Filter::parse_time("the start date", s, false))
                .transpose()?,
            until: text(&self.until)
                .map(|s| Filter::parse_time("the end date", s, true))
                .transpose()?,
        };
        if let (Some(since), Some(until)) = (filter.since, filter.until) {
            if until <= since {
                return Err(Error::Other(
                    "The end date is before the start date, so no recording could match.".into(),
                ));
            }
        }
        Ok(ExportOptions {
            format: self.format,
            filter,
            include_retracted: self.include_retracted,
            rows_per_file: self.rows_per_file.unwrap_or(folder::DEFAULT_ROWS_PER_FILE),
        })
    }
}

/// A filter's text, trimmed; `None` when empty.
fn text(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// How far an export is: `done` of `total` episodes written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExportProgress {
    /// Episodes handled so far (written or left out).
    pub done: u32,
    /// Episodes the filters picked.
    pub total: u32,
}

/// How many of the store's episodes `options` picks: what the app shows
/// before anyone presses Export.
pub fn count_matching(store: &Store, options: &ExportOptions) -> Result<usize> {
    Ok(Source::Store(store).select(&options.filter)?.len())
}

/// Exports the store's episodes picked by `options` to `output`, exactly
/// as `understudy export --store … --worlds worlds_dir` does: the worlds
/// the episodes need are loaded from `worlds_dir` (for the training
/// formats), and the output appears only when complete. `progress` is told
/// the total first (`done` = 0), then after every episode.
pub fn export_store(
    store: &Store,
    worlds_dir: &Path,
    options: &ExportOptions,
    output: &Path,
    progress: &dyn Fn(ExportProgress),
) -> Result<ExportSummary> {
    let source = Source::Store(store);
    let selected = source.select(&options.filter)?;
    let total = u32::try_from(selected.len()).unwrap_or(u32::MAX);
    let worlds = if options.format.needs_worlds() {
        let ids: BTreeSet<String> = selected
            .iter()
            .map(|s| s.record().world_id.clone())
            .collect();
        Some(WorldSet::load(worlds_dir, &ids)?)
    } else {
        None
    };
    drop(selected);
    progress(ExportProgress { done: 0, total });
    let done = std::cell::Cell::new(0u32);
    export_to_path(&source, worlds.as_ref(), options, output, &|| {
        done.set(done.get().saturating_add(1));
        progress(ExportProgress {
            done: done.get(),
            total,
        });
    })
}
