//! `understudy score`: replay and score trajectories against their tasks'
//! rubrics; write one JSON line per episode and a summary.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use understudy::rubric::batch::{self, RunToScore, ScoredLine, Summary};
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
    let (trajectories, source): (Vec<RunToScore>, String) = match (&args.input, &args.actor, &store)
    {
        (Some(path), None, _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let source = path.display().to_string();
            (
                batch::parse_jsonl(&text, &source, &world, args.task_prefix.as_deref())?,
                source,
            )
        }
        (None, Some(actor), Some(store)) => {
            let t = batch::from_store(store, &world, actor)?;
            if t.is_empty() {
                anyhow::bail!(
                    "the store has no finished episodes of `{actor}` in world {}",
                    world.meta.id
                );
            }
            (t, format!("{} (actor {actor})", store.path().display()))
        }
        _ => anyhow::bail!("say what to score: --input FILE, or --store FILE --actor NAME"),
    };
    batch::check_rubrics(&trajectories, &rubrics, &world, &source)?;
    if args.save && trajectories.iter().any(|t| t.run.episode_id.is_none()) {
        anyhow::bail!("--save keeps scores of stored episodes; some trajectories in {source} have no episode id");
    }

    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(trajectories.len() as u64);
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
    let scores = batch::score_all(&world, &rubrics, &trajectories, judge.as_ref(), &|| {
        bar.inc(1)
    })?;
    bar.finish_and_clear();
    let elapsed = started.elapsed();

    let mut buf = Vec::with_capacity(scores.len() * 1024);
    for (t, s) in trajectories.iter().zip(&scores) {
        serde_json::to_writer(
            &mut buf,
            &ScoredLine {
                line: t.run.line,
                score: s,
            },
        )?;
        buf.push(b'\n');
    }
    let to_stdout = args.output.as_os_str() == "-";
    if to_stdout {
        std::io::stdout().write_all(&buf)?;
    } else {
        // Complete or not at all; a device or FIFO is written through.
        understudy::output_file::write(&args.output, &buf)?;
    }
    if args.save {
        if let Some(store) = &store {
            let records: Vec<ScoreRecord> = scores
                .iter()
                .map(ScoreRecord::try_from)
                .collect::<Result<_, _>>()?;
            store.save_scores(&records)?;
        }
    }

    let summary = batch::summarize(&scores, args.seed);
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
    for s in &scores {
        for c in s
            .criteria
            .iter()
            .filter(|c| c.met.is_none() && c.error.is_some())
        {
            eprintln!(
                "warning: {} ({}): {}",
                s.episode_id.as_deref().unwrap_or(&s.task_id),
                c.id,
                c.error.as_deref().unwrap_or("")
            );
        }
    }
    if args.save {
        eprintln!(
            "saved {} score(s) to {}",
            scores.len(),
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
