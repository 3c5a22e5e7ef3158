//! `understudy replay`, in two modes:
//!
//! - batch: `--world W --input actions.jsonl [--output out.jsonl]` replays
//!   JSONL action lists and writes observations and state diffs;
//! - stored: `--store FILE [--episode ID] [--force]`, or `--input
//!   episodes.jsonl` in the native export format, re-executes recorded
//!   trajectories and reports the first divergence of each. Exits non-zero
//!   when any episode diverged.

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use understudy::export::{native, EpisodeBundle, WorldSet};
use understudy::replay::{self, StoredReplay};
use understudy::store::Store;
use understudy::trajectory::Trajectory;

#[derive(Args)]
pub struct ReplayArgs {
    /// The world folder. Stored mode: use this world instead of finding it by id in --worlds.
    #[arg(long)]
    world: Option<PathBuf>,
    /// JSONL input: one `{"actions": [...]}` per line (engine or τ-bench action shapes); or, for stored
    /// mode, episodes in the native export format.
    #[arg(long, required_unless_present = "store")]
    input: Option<PathBuf>,
    /// JSONL output, one line per input line, in input order (`-` for standard output). Stored mode: the report.
    #[arg(long, default_value = "-")]
    output: PathBuf,
    /// Stored mode: replay episodes from this trajectory store.
    #[arg(long, conflicts_with = "input")]
    store: Option<PathBuf>,
    /// Stored mode: the episode to replay (default: every episode in the store or file).
    #[arg(long, value_name = "ID")]
    episode: Option<String>,
    /// Stored mode: replay even if the world changed since the episode was recorded.
    #[arg(long)]
    force: bool,
    /// Stored mode: folder of world folders, searched by world id.
    #[arg(long, default_value = "fixtures/worlds")]
    worlds: PathBuf,
    /// Stored mode: write the report as JSON lines (one per episode) instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let stored = args.store.is_some()
        || args.episode.is_some()
        || args.force
        || args.json
        || args
            .input
            .as_deref()
            .map(is_native_file)
            .transpose()?
            .unwrap_or(false);
    if stored {
        return run_stored(args);
    }
    let (Some(world), Some(input)) = (&args.world, &args.input) else {
        anyhow::bail!("batch replay needs --world FOLDER and --input actions.jsonl (or --store FILE to replay recorded episodes)");
    };
    run_batch(world, input, &args.output)
}

/// Whether `path`'s first non-blank line is a native episode
/// (`"format": "understudy.episode/…"`), i.e. stored mode. Reads up to
/// that line only: the input may be a batch of gigabytes.
fn is_native_file(path: &Path) -> anyhow::Result<bool> {
    let mut first = None;
    for line in input_lines(path)? {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        if !line.trim().is_empty() {
            first = Some(line);
            break;
        }
    }
    let Some(first) = first else {
        return Ok(false);
    };
    Ok(serde_json::from_str::<serde_json::Value>(&first)
        .ok()
        .and_then(|v| {
            v.get("format")
                .and_then(|f| f.as_str())
                .map(|f| f.starts_with("understudy.episode/"))
        })
        .unwrap_or(false))
}

fn progress_bar(len: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} replaying [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Streams: the input is read a line at a time (once to check every line,
/// so a bad line rejects the input before anything is written, then again
/// to replay), and each output line is written as soon as it and all
/// before it are done, so memory stays flat however long the batch is.
fn run_batch(world: &Path, input: &Path, output: &Path) -> anyhow::Result<ExitCode> {
    let world = super::load_world(world)?;
    let source = input.display().to_string();
    let mut problems = Vec::new();
    let mut count = 0;
    for (i, line) in input_lines(input)?.enumerate() {
        match replay::parse_input_line(&line?, i + 1) {
            Ok(Some(_)) => count += 1,
            Ok(None) => {}
            Err(e) => problems.push(format!("{source}:{}: {e}", i + 1)),
        }
    }
    if !problems.is_empty() {
        return Err(understudy::Error::InvalidAction(problems.join("\n")).into());
    }
    let inputs = input_lines(input)?
        .enumerate()
        .filter_map(|(i, line)| match line {
            Err(e) => Some(Err(understudy::Error::Other(format!(
                "reading {source}: {e}"
            )))),
            Ok(line) => replay::parse_input_line(&line, i + 1)
                .map_err(|e| understudy::Error::InvalidAction(format!("{source}:{}: {e}", i + 1)))
                .transpose(),
        });
    let bar = progress_bar(count);
    let fill = |out: &mut dyn Write| -> understudy::Result<usize> {
        let mut line = Vec::with_capacity(32 << 10);
        replay::replay_each(&world, inputs, &|| bar.inc(1), &mut |o| {
            line.clear();
            serde_json::to_writer(&mut line, &o)
                .map_err(|e| understudy::Error::Other(format!("writing output: {e}")))?;
            line.push(b'\n');
            out.write_all(&line)
                .map_err(|e| understudy::Error::Other(format!("writing output: {e}")))
        })
    };
    let replayed = if output.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
        let n = fill(&mut out)?;
        out.flush()?;
        n
    } else {
        // Complete or not at all; a device or FIFO is written through.
        understudy::output_file::write_with(output, fill)?
    };
    bar.finish_and_clear();
    eprintln!(
        "replayed {replayed} action lists in world {}",
        world.meta.id
    );
    Ok(ExitCode::SUCCESS)
}

/// The lines of `path`, read through a buffer.
pub(crate) fn input_lines(
    path: &Path,
) -> anyhow::Result<std::io::Lines<std::io::BufReader<std::fs::File>>> {
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(std::io::BufRead::lines(std::io::BufReader::with_capacity(
        1 << 20,
        file,
    )))
}

fn write_output(output: &Path, buf: &[u8]) -> anyhow::Result<()> {
    if output.as_os_str() == "-" {
        std::io::stdout().write_all(buf)?;
    } else {
        // Complete or not at all; a device or FIFO is written through.
        understudy::output_file::write(output, buf)?;
    }
    Ok(())
}

fn run_stored(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let mut bundles: Vec<EpisodeBundle> = match (&args.store, &args.input) {
        (Some(path), _) => {
            if !path.is_file() {
                anyhow::bail!("there is no store at {}", path.display());
            }
            // Replay only reads: a read-only store will do.
            let store = Store::open_for_reading(path)?;
            let records = match &args.episode {
                Some(id) => vec![store
                    .episode(id)
                    .with_context(|| format!("in {}", path.display()))?],
                None => store.episodes(&Default::default())?,
            };
            records
                .into_iter()
                .map(|record| {
                    Ok(EpisodeBundle {
                        trajectory: Trajectory {
                            steps: store.steps(&record.id)?,
                            record,
                        },
                        expert: None,
                        reviews: Vec::new(),
                    })
                })
                .collect::<understudy::Result<_>>()?
        }
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            native::parse(&text, &path.display().to_string())?
                .into_iter()
                .map(|p| p.bundle)
                .collect()
        }
        (None, None) => anyhow::bail!("give --store FILE or --input episodes.jsonl"),
    };
    if let Some(id) = &args.episode {
        bundles.retain(|b| &b.record.id == id);
        if bundles.is_empty() {
            anyhow::bail!("episode {id} is not in the input");
        }
    }
    let worlds = match &args.world {
        Some(dir) => WorldSet::single(super::load_world(dir)?),
        None => {
            let ids: BTreeSet<String> = bundles.iter().map(|b| b.record.world_id.clone()).collect();
            WorldSet::load(&args.worlds, &ids)?
        }
    };
    // Every refusal (missing world, changed world) is reported before
    // anything runs, so one run shows all that blocks the replay.
    let mut refused = Vec::new();
    let mut jobs = Vec::with_capacity(bundles.len());
    for b in &bundles {
        let world = match (&args.world, worlds.get(&b.record.world_id)) {
            (_, Some(w)) => Arc::clone(w),
            (Some(_), None) => match worlds.worlds().next() {
                Some(w) => Arc::clone(w),
                None => continue,
            },
            (None, None) => {
                refused.push(format!(
                    "episode {}: world `{}` is not in {} (--worlds names the folder that holds world folders; --world names one world)",
                    b.record.id,
                    b.record.world_id,
                    worlds.dir().display()
                ));
                continue;
            }
        };
        match understudy::recorder::check_world(&b.record, &world, args.force) {
            Ok(()) => jobs.push((world, b)),
            Err(e) => refused.push(e.to_string()),
        }
    }
    if !refused.is_empty() {
        anyhow::bail!(
            "cannot replay:\n{}",
            refused
                .iter()
                .map(|r| format!("  - {r}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    let bar = progress_bar(jobs.len());
    let reports: Vec<StoredReplay> = jobs
        .par_iter()
        .map(|(world, b)| {
            let r = replay::replay_stored(world, &b.trajectory, args.force)
                .with_context(|| format!("replaying episode {}", b.record.id));
            bar.inc(1);
            r
        })
        .collect::<anyhow::Result<_>>()?;
    bar.finish_and_clear();
    let mut buf = Vec::new();
    for r in &reports {
        if args.json {
            serde_json::to_writer(&mut buf, r)?;
            buf.push(b'\n');
        } else {
            buf.extend_from_slice(render(r).as_bytes());
        }
    }
    write_output(&args.output, &buf)?;
    let diverged = reports.iter().filter(|r| r.divergence.is_some()).count();
    eprintln!(
        "replayed {} episode(s): {} matched, {} diverged",
        reports.len(),
        reports.len() - diverged,
        diverged
    );
    Ok(if diverged == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The human report for one episode.
fn render(r: &StoredReplay) -> String {
    let mut s = format!("episode {} ({}/{})", r.episode_id, r.world_id, r.task_id);
    if r.world_changed {
        s.push_str(" [world changed since recording; replayed with --force]");
    }
    let Some(d) = &r.divergence else {
        s.push_str(&format!(
            ": all {} kept steps match the recording\n",
            r.kept_steps
        ));
        return s;
    };
    s.push_str(&format!(
        ": DIVERGED at step {} (kept step {} of {})\n",
        d.step,
        d.position + 1,
        r.kept_steps
    ));
    s.push_str(&format!("  action:   {}\n", compact(&d.action)));
    if d.expected.text != d.actual.text {
        s.push_str(&format!("  expected: {}\n", indent(&d.expected.text)));
        s.push_str(&format!("  actual:   {}\n", indent(&d.actual.text)));
    } else if d.expected != d.actual {
        s.push_str(&format!("  expected: {}\n", compact(&d.expected)));
        s.push_str(&format!("  actual:   {}\n", compact(&d.actual)));
    }
    for o in &d.other {
        s.push_str(&format!("  also:     {o}\n"));
    }
    let changes = serde_json::to_string_pretty(&d.changes).unwrap_or_default();
    s.push_str(&format!(
        "  state so far (changes against the seed):\n{}\n",
        indent_all(&changes, "    ")
    ));
    s
}

fn indent(text: &str) -> String {
    text.replace('\n', "\n            ")
}

fn indent_all(text: &str, pad: &str) -> String {
    text.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One-line JSON for report fields.
fn compact<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
