//! `understudy score`: replay and score trajectories against their tasks'
//! rubrics; write one JSON line per episode and a summary.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use understudy::rubric::batch::{self, RunToScore, ScoredLine, Summary, SummaryBuilder};
use understudy::rubric::{JudgeCommand, RubricSet};
use understudy::store::{ScoreRecord, Store};

#[derive(Args)]
pub struct ScoreArgs {
    /// The world folder (rubrics are read from its `rubrics/`).
    #[arg(long)]
    world: PathBuf,
    /// JSONL trajectories: native episode exports, `{task_id, actions}`, or
    /// τ-bench `{task_index, actions: [{name, kwargs}]}` (with --task-prefix).
    #[arg(long, conflicts_with = "actor")]
    input: Option<PathBuf>,
    /// Maps τ-bench `task_index` n to task `<prefix>n`, e.g. `train-`.
    #[arg(long)]
    task_prefix: Option<String>,
    /// The store: with --actor, score its episodes; with --save, keep the scores.
    #[arg(long)]
    store: Option<PathBuf>,
    /// Score the store's finished episodes of this actor (model name or expert id).
    #[arg(long, requires = "store")]
    actor: Option<String>,
    /// Write the scores to the store (stored episodes only; all or nothing).
    #[arg(long, requires = "store")]
    save: bool,
    /// Per-episode JSONL output (`-` for standard output, then the summary goes to standard error).
    #[arg(long, default_value = "-")]
    output: PathBuf,
    /// Print the summary as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// External judge for judged criteria: a command reading JSON on stdin and
    /// printing {"met": bool, "reason": ".."}.
    #[arg(long)]
    judge: Option<String>,
    /// Seconds the judge may take per criterion (0.001 to 1e9).
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = super::seconds::parse)]
    judge_timeout: Duration,
    /// Seed of the bootstrap confidence interval.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: ScoreArgs) -> anyhow::Result<ExitCode> {
    let world = super::load_world(&args.world)?;
    let rubrics = RubricSet::load(&world)?;
    // Only --save writes; otherwise a read-only store will do.
    let store = match &args.store {
        Some(path) if args.save => Some(Store::open(path)?),
        Some(path) => Some(Store::open_for_reading(path)?),
        None => None,
    };
    let judge = match &args.judge {
        Some(cmd) => Some(JudgeCommand::parse(cmd, args.judge_timeout)?),
        None => None,
    };
    // Checked before any work starts: every line parses, names a task with
    // a rubric and (with --save) a stored episode. Then the runs are read
    // again and scored as they come, and each score is written as soon as
    // it and all before it are done, so memory stays flat in batch size.
    let (runs, count): (Runs<'_>, usize) = match (&args.input, &args.actor, &store) {
        (Some(path), None, _) => {
            let source = path.display().to_string();
            let count = check_input(path, &source, &world, &rubrics, &args)?;
            let prefix = args.task_prefix.as_deref();
            let lines = super::replay::input_lines(path)?;
            let world = &world;
            let source_name = source.clone();
            let runs = lines.enumerate().filter_map(move |(i, line)| match line {
                Err(e) => Some(Err(understudy::Error::Other(format!(
                    "reading {source_name}: {e}"
                )))),
                Ok(line) => batch::parse_jsonl_line(&line, i + 1, world, prefix)
                    .map_err(|e| understudy::Error::InvalidInput {
                        path: source_name.clone(),
                        problems: vec![format!("line {}: {e}", i + 1)],
                    })
                    .transpose(),
            });
            (Box::new(runs), count)
        }
        (None, Some(actor), Some(store)) => {
            let t = batch::from_store(store, &world, actor)?;
            if t.is_empty() {
                anyhow::bail!(
                    "the store has no finished episodes of `{actor}` in world {}",
                    world.meta.id
                );
            }
            let source = format!("{} (actor {actor})", store.path().display());
            batch::check_rubrics(&t, &rubrics, &world, &source)?;
            if args.save && t.iter().any(|t| t.run.episode_id.is_none()) {
                anyhow::bail!("--save keeps scores of stored episodes; some trajectories in {source} have no episode id");
            }
            let count = t.len();
            (Box::new(t.into_iter().map(Ok)), count)
        }
        _ => anyhow::bail!("say what to score: --input FILE, or --store FILE --actor NAME"),
    };

    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(count as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} scoring [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let started = std::time::Instant::now();
    let mut summary = SummaryBuilder::default();
    let mut warnings = Vec::new();
    let mut records: Vec<ScoreRecord> = Vec::new();
    let fill = |out: &mut dyn Write| -> understudy::Result<usize> {
        let mut line = Vec::with_capacity(16 << 10);
        batch::score_each(
            &world,
            &rubrics,
            runs,
            judge.as_ref(),
            &|| bar.inc(1),
            &mut |number, score| {
                line.clear();
                serde_json::to_writer(
                    &mut line,
                    &ScoredLine {
                        line: number,
                        score: &score,
                    },
                )
                .map_err(|e| understudy::Error::Other(format!("writing output: {e}")))?;
                line.push(b'\n');
                out.write_all(&line)
                    .map_err(|e| understudy::Error::Other(format!("writing output: {e}")))?;
                summary.add(&score);
                for c in score
                    .criteria
                    .iter()
                    .filter(|c| c.met.is_none() && c.error.is_some())
                {
                    warnings.push(format!(
                        "warning: {} ({}): {}",
                        score.episode_id.as_deref().unwrap_or(&score.task_id),
                        c.id,
                        c.error.as_deref().unwrap_or("")
                    ));
                }
                if args.save {
                    records.push(ScoreRecord::try_from(&score)?);
                }
                Ok(())
            },
        )
    };
    let to_stdout = args.output.as_os_str() == "-";
    let scored = if to_stdout {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
        let n = fill(&mut out)?;
        out.flush()?;
        n
    } else {
        // Complete or not at all; a device or FIFO is written through.
        understudy::output_file::write_with(&args.output, fill)?
    };
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    if args.save {
        if let Some(store) = &store {
            store.save_scores(&records)?;
        }
    }

    let summary = summary.finish(args.seed);
    let text = if args.json {
        serde_json::to_string_pretty(&summary)? + "\n"
    } else {
        render_summary(&summary, world.meta.id.as_str(), elapsed)
    };
    if to_stdout {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    for warning in &warnings {
        eprintln!("{warning}");
    }
    if args.save {
        eprintln!(
            "saved {} score(s) to {}",
            scored,
            args.store
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        );
    }
    Ok(if summary.judge_errors > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// The runs to score, pulled as the workers free up.
type Runs<'a> = Box<dyn Iterator<Item = understudy::Result<RunToScore>> + Send + 'a>;

/// Reads `path` once, a line at a time, checking every line (it parses,
/// its task has a rubric, with --save it names an episode) without keeping
/// any; every problem is listed. Returns how many runs it holds.
fn check_input(
    path: &std::path::Path,
    source: &str,
    world: &understudy::World,
    rubrics: &RubricSet,
    args: &ScoreArgs,
) -> anyhow::Result<usize> {
    let mut problems = Vec::new();
    let mut missing = Vec::new();
    let mut count = 0;
    let mut without_id = false;
    for (i, line) in super::replay::input_lines(path)?.enumerate() {
        let line = line.with_context(|| format!("reading {source}"))?;
        match batch::parse_jsonl_line(&line, i + 1, world, args.task_prefix.as_deref()) {
            Ok(Some(t)) => {
                count += 1;
                missing.extend(batch::missing_rubric(&t, rubrics, world));
                without_id |= t.run.episode_id.is_none();
            }
            Ok(None) => {}
            Err(e) => problems.push(format!("line {}: {e}", i + 1)),
        }
    }
    if problems.is_empty() && count == 0 {
        problems.push("no trajectories: the file has no lines".to_string());
    }
    for problems in [problems, missing] {
        if !problems.is_empty() {
            return Err(understudy::Error::InvalidInput {
                path: source.to_string(),
                problems,
            }
            .into());
        }
    }
    if args.save && without_id {
        anyhow::bail!("--save keeps scores of stored episodes; some trajectories in {source} have no episode id");
    }
    Ok(count)
}

fn render_summary(s: &Summary, world: &str, elapsed: Duration) -> String {
    let mut out = String::new();
    let f = |x: Option<f64>| x.map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}"));
    out.push_str(&format!(
        "scored {} episode(s) of {world} in {:.2} s: {} with a value, {} pending a judgment\n",
        s.episodes,
        elapsed.as_secs_f64(),
        s.scored,
        s.pending
    ));
    out.push_str(&format!(
        "mean {}  95% CI {}  (bootstrap, {} resamples, seed {})\n",
        f(s.mean),
        s.ci95
            .map_or("n/a".to_string(), |c| format!("[{:.3}, {:.3}]", c[0], c[1])),
        s.bootstrap_resamples,
        s.bootstrap_seed
    ));
    let rate = |x: Option<f64>| x.map_or("n/a".to_string(), |v| format!("{:.1}%", v * 100.0));
    out.push_str(&format!(
        "passed {} ({} of {} decided)  full marks {}\n",
        rate(s.pass_rate),
        (s.pass_rate.unwrap_or(0.0) * s.decided as f64).round(),
        s.decided,
        rate(s.full_marks)
    ));
    if s.pass_k.iter().any(|p| p.k > 1) {
        let parts: Vec<String> = s
            .pass_k
            .iter()
            .map(|p| format!("pass^{} {:.3} ({} tasks)", p.k, p.value, p.tasks))
            .collect();
        out.push_str(&format!("{}\n", parts.join("  ")));
    }
    if s.check_errors > 0 {
        out.push_str(&format!(
            "{} episode(s) had a check that could not run (counted against them)\n",
            s.check_errors
        ));
    }
    if s.judge_errors > 0 {
        out.push_str(&format!(
            "{} judged criterion/criteria could not be graded by the judge (left pending)\n",
            s.judge_errors
        ));
    }
    // Over several tasks, one id can mean different criteria (`output-1`)
    // with different points: each row names its task then.
    let tasks: std::collections::BTreeSet<&str> = s
        .task_criteria
        .iter()
        .filter_map(|c| c.task_id.as_deref())
        .collect();
    let mut rows: Vec<(String, &batch::CriterionRate)> = if tasks.len() > 1 {
        s.task_criteria
            .iter()
            .map(|c| {
                let task = c.task_id.as_deref().unwrap_or("");
                (format!("{task} {}", c.criterion_id), c)
            })
            .collect()
    } else {
        s.criteria
            .iter()
            .map(|c| (c.criterion_id.clone(), c))
            .collect()
    };
    rows.sort_by(|a, b| a.1.rate.total_cmp(&b.1.rate).then_with(|| a.0.cmp(&b.0)));
    let width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(9).max(9);
    let label = if tasks.len() > 1 {
        "task criterion"
    } else {
        "criterion"
    };
    out.push_str(&format!(
        "\n{label:width$}  {:>7}  {:>15}  {:>6}\n",
        "points", "met/evaluated", "rate"
    ));
    const ROWS: usize = 25;
    for (name, c) in rows.iter().take(ROWS) {
        out.push_str(&format!(
            "{name:width$}  {:>7}  {:>15}  {:>5.1}%\n",
            format!("{:+}", c.points),
            format!("{}/{}", c.met, c.evaluated),
            c.rate * 100.0
        ));
    }
    if rows.len() > ROWS {
        out.push_str(&format!("… {} more (see --json)\n", rows.len() - ROWS));
    }
    out
}
