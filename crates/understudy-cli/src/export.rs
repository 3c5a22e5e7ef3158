//! `understudy export` and `understudy import`: datasets out of and
//! episodes into a trajectory store. The work is in `understudy::export`;
//! this file turns flags into options and reports what happened.

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use understudy::export::{
    self, native, EpisodeBundle, ExportOptions, Filter, Format, Source, WorldSet,
};
use understudy::store::Store;

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// Everything, one `understudy.episode/1` object per line (re-importable).
    Native,
    /// Hugging Face / TRL conversational JSONL (`messages` + `tools`).
    Trl,
    /// OpenAI chat fine-tuning JSONL.
    Openai,
    /// A dataset folder: chunked TRL JSONL, meta/info.json, dataset card.
    Folder,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Native => Format::Native,
            FormatArg::Trl => Format::Trl,
            FormatArg::Openai => Format::OpenAi,
            FormatArg::Folder => Format::Folder,
        }
    }
}

#[derive(Args)]
pub struct ExportArgs {
    /// The trajectory store to export from.
    #[arg(long, required_unless_present_any = ["input", "hub"], conflicts_with_all = ["input", "hub"])]
    store: Option<PathBuf>,
    /// Export from a team hub instead (`--hub URL --token T`).
    #[command(flatten)]
    hub: crate::hub::OptionalHub,
    /// A native episodes JSONL to convert, instead of a store.
    #[arg(long, conflicts_with = "hub")]
    input: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum)]
    format: FormatArg,
    /// Output file (`-` for standard output), or folder for `--format folder`.
    #[arg(long)]
    output: PathBuf,
    /// Folder of world folders; each episode's world is found here by id.
    #[arg(long, default_value = "fixtures/worlds")]
    worlds: PathBuf,
    /// Only episodes of this world (id).
    #[arg(long = "world", value_name = "ID")]
    world: Option<String>,
    /// Only episodes of this task (id).
    #[arg(long, value_name = "ID")]
    task: Option<String>,
    /// Only episodes with this status (in_progress, paused, submitted, abandoned, approved, rejected).
    #[arg(long, value_name = "S")]
    status: Option<String>,
    /// Only episodes recorded by this expert (id).
    #[arg(long, value_name = "ID")]
    expert: Option<String>,
    /// Only episodes started at or after this date/time (YYYY-MM-DD or RFC 3339).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only episodes started before this time; a plain date includes that whole day.
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// Keep undone (retracted) steps in trl/openai/folder exports.
    #[arg(long)]
    include_retracted: bool,
    /// Rows (episodes) per data file, for `--format folder`.
    #[arg(long, value_name = "N")]
    rows_per_file: Option<usize>,
}

#[derive(Args)]
pub struct ImportArgs {
    /// The trajectory store to import into (created if missing).
    #[arg(long)]
    store: PathBuf,
    /// Native episodes JSONL, as written by `understudy export --format native`.
    #[arg(long)]
    input: PathBuf,
    /// Folder of world folders; each episode's world and task must exist here.
    #[arg(long, default_value = "fixtures/worlds")]
    worlds: PathBuf,
}

fn filter(args: &ExportArgs) -> anyhow::Result<Filter> {
    Ok(Filter {
        world: args.world.clone(),
        task: args.task.clone(),
        status: args
            .status
            .as_deref()
            .map(|s| Filter::parse_status("--status", s))
            .transpose()?,
        expert: args.expert.clone(),
        since: args
            .since
            .as_deref()
            .map(|s| Filter::parse_time("--since", s, false))
            .transpose()?,
        until: args
            .until
            .as_deref()
            .map(|s| Filter::parse_time("--until", s, true))
            .transpose()?,
    })
}

/// Opens a store that must already exist: exporting from a mistyped path
/// must not create an empty store and report zero episodes. One that
/// cannot be written (read-only file or mount) is opened read-only.
fn open_existing(path: &Path) -> anyhow::Result<Store> {
    if !path.is_file() {
        anyhow::bail!("there is no store at {}", path.display());
    }
    Ok(Store::open_for_reading(path)?)
}

fn read_native(path: &Path) -> anyhow::Result<Vec<EpisodeBundle>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(native::parse(&text, &path.display().to_string())?
        .into_iter()
        .map(|p| p.bundle)
        .collect())
}

/// The hub's episodes matching `filter`, as the engine's own bundles, and
/// their rewards (latest scores): every format is then written by the same
/// code as a local export.
fn from_hub(
    hub: &understudy_hub::client::Hub,
    filter: &Filter,
) -> anyhow::Result<(
    Vec<EpisodeBundle>,
    std::collections::HashMap<String, export::trl::Reward>,
)> {
    let query = understudy_hub::client::EpisodeQuery {
        world: filter.world.clone(),
        task: filter.task.clone(),
        status: filter.status,
        expert: filter.expert.clone(),
    };
    Ok(hub.export_scored(&query)?)
}

fn progress_bar(len: usize, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {what} [{{bar:40}}] {{pos}}/{{len}} ({{per_sec}}, eta {{eta}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let format: Format = args.format.into();
    if args.include_retracted && format == Format::Native {
        anyhow::bail!("--include-retracted applies to trl, openai and folder; the native format always keeps retracted steps (marked `\"retracted\": true`)");
    }
    if args.rows_per_file.is_some() && format != Format::Folder {
        anyhow::bail!("--rows-per-file applies only to --format folder");
    }
    if args.rows_per_file == Some(0) {
        anyhow::bail!("--rows-per-file must be at least 1");
    }
    let options = ExportOptions {
        format,
        filter: filter(&args)?,
        include_retracted: args.include_retracted,
        rows_per_file: args
            .rows_per_file
            .unwrap_or(export::folder::DEFAULT_ROWS_PER_FILE),
    };
    let store;
    let loaded;
    let rewards;
    let source = match (&args.store, &args.input) {
        (Some(path), _) => {
            store = open_existing(path)?;
            Source::Store(&store)
        }
        (None, Some(path)) => {
            loaded = read_native(path)?;
            Source::Episodes(&loaded)
        }
        (None, None) => match args.hub.connect()? {
            Some(hub) => {
                (loaded, rewards) = from_hub(&hub, &options.filter)?;
                Source::Scored(&loaded, &rewards)
            }
            None => anyhow::bail!("give --store FILE, --input episodes.jsonl or --hub URL"),
        },
    };
    let selected = source.select(&options.filter)?;
    let worlds = if format.needs_worlds() {
        let ids: BTreeSet<String> = selected
            .iter()
            .map(|s| s.record().world_id.clone())
            .collect();
        Some(WorldSet::load(&args.worlds, &ids)?)
    } else {
        None
    };
    if selected.is_empty() {
        eprintln!("warning: no episodes match the filters; the export is empty");
    }
    let bar = progress_bar(selected.len(), "exporting");
    drop(selected);
    let to_stdout = args.output.as_os_str() == "-";
    let summary = if to_stdout {
        if format == Format::Folder {
            anyhow::bail!("--format folder needs a folder for --output, not standard output");
        }
        let stdout = std::io::stdout();
        let mut lock = std::io::BufWriter::new(stdout.lock());
        let s = export::write_jsonl(&source, worlds.as_ref(), &options, &mut lock, &|| {
            bar.inc(1)
        })?;
        lock.flush()?;
        s
    } else {
        export::export_to_path(&source, worlds.as_ref(), &options, &args.output, &|| {
            bar.inc(1)
        })?
    };
    bar.finish_and_clear();
    for w in &summary.warnings {
        eprintln!("warning: {w}");
    }
    eprintln!(
        "exported {} episode(s), {} step(s) as {} to {}",
        summary.episodes,
        summary.steps,
        args.format
            .to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default(),
        if to_stdout {
            "standard output".to_string()
        } else {
            args.output.display().to_string()
        }
    );
    Ok(ExitCode::SUCCESS)
}

pub fn run_import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.input)
        .with_context(|| format!("reading {}", args.input.display()))?;
    let existed = args.store.exists();
    let store = Store::open(&args.store)?;
    let summary = match export::import(
        &store,
        &text,
        &args.input.display().to_string(),
        &args.worlds,
    ) {
        Ok(s) => s,
        Err(e) => {
            // A rejected import into a new store leaves no empty store behind.
            drop(store);
            if !existed {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = args.store.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
            return Err(anyhow::Error::new(e).context("nothing was imported"));
        }
    };
    for w in &summary.warnings {
        eprintln!("warning: {w}");
    }
    eprintln!(
        "imported {} episode(s) ({} steps, {} reviews, {} new expert(s)) into {}",
        summary.episodes,
        summary.steps,
        summary.reviews,
        summary.experts_added,
        args.store.display()
    );
    Ok(ExitCode::SUCCESS)
}
