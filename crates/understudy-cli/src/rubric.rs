//! `understudy rubric check|lint|derive|judge`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use understudy::rubric::derive::{self, DeriveOptions};
use understudy::rubric::lint::{self, ClassScore, LintOptions, LintReport};
use understudy::rubric::mutations::MutantKind;
use understudy::rubric::{Judgment, Rubric, RubricSet};
use understudy::store::{JudgmentRecord, Store};
use understudy::Error;

#[derive(Subcommand)]
pub enum RubricCommand {
    /// Validate every rubric of a world against it; print every problem.
    Check {
        #[arg(long)]
        world: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check rubrics against known runs: gold scores 1, doing nothing scores 0,
    /// mutants of gold score lower, no criterion is constant.
    Lint {
        #[arg(long)]
        world: PathBuf,
        /// Also treat this store's approved episodes as gold.
        #[arg(long)]
        store: Option<PathBuf>,
        /// A folder of rubric files that replace the world's own of the
        /// same task: the app's saved edits (`<data dir>/rubrics/<world id>`).
        #[arg(long)]
        rubrics: Option<PathBuf>,
        /// Only this task.
        #[arg(long)]
        task: Option<String>,
        /// A task fails below this mutation score (0 to 1).
        #[arg(long, default_value_t = 0.9)]
        min_mutation_score: f64,
        /// Print the full report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print, per rubric, which cheat classes it catches (stuffing, spray,
    /// near miss, refused attempt, disclosure, dropped read, detour).
    Audit {
        #[arg(long)]
        world: PathBuf,
        /// Only this task.
        #[arg(long)]
        task: Option<String>,
        /// Print the lint report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write rubrics derived from each task's reference solution: final
    /// records equal gold's, nothing else changed, outputs said.
    Derive {
        #[arg(long)]
        world: PathBuf,
        /// Required: derive from the reference `solution` of each task.
        #[arg(long)]
        from_solution: bool,
        /// Only this task.
        #[arg(long)]
        task: Option<String>,
        /// Replace existing rubric files.
        #[arg(long)]
        force: bool,
    },
    /// Record a person's grade of a judged criterion in the store.
    Judge {
        #[arg(long)]
        world: PathBuf,
        #[arg(long)]
        store: PathBuf,
        #[arg(long)]
        episode: String,
        #[arg(long)]
        criterion: String,
        /// true (met) or false (not met); for a criterion on a scale, give
        /// --level instead (it decides met).
        #[arg(long, action = clap::ArgAction::Set, required_unless_present = "level")]
        met: Option<bool>,
        /// For a criterion graded on a scale: the level's label.
        #[arg(long)]
        level: Option<String>,
        #[arg(long)]
        reason: String,
        /// Who graded (an expert id).
        #[arg(long)]
        judge: String,
    },
}

pub fn run(cmd: RubricCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        RubricCommand::Check { world, json } => check(world, json),
        RubricCommand::Lint {
            world,
            store,
            rubrics,
            task,
            min_mutation_score,
            json,
        } => run_lint(world, store, rubrics, task, min_mutation_score, json),
        RubricCommand::Audit { world, task, json } => run_audit(world, task, json),
        RubricCommand::Derive {
            world,
            from_solution,
            task,
            force,
        } => run_derive(world, from_solution, task, force),
        RubricCommand::Judge {
            world,
            store,
            episode,
            criterion,
            met,
            level,
            reason,
            judge,
        } => run_judge(
            world,
            store,
            episode,
            criterion,
            (met, level),
            reason,
            judge,
        ),
    }
}

fn check(dir: PathBuf, json: bool) -> anyhow::Result<ExitCode> {
    let world = super::load_world(&dir)?;
    match RubricSet::load(&world) {
        Ok(set) => {
            let missing: Vec<&String> = world
                .tasks
                .keys()
                .filter(|t| set.get(t).is_none())
                .collect();
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": true, "rubrics": set.rubrics.len(), "tasks_without_rubric": missing, "problems": []})
                );
            } else {
                println!(
                    "ok: {} rubric(s) for {} task(s) of {}",
                    set.rubrics.len(),
                    world.tasks.len(),
                    world.meta.id
                );
                if !missing.is_empty() {
                    println!(
                        "tasks without a rubric: {}",
                        missing
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(Error::RubricInvalid { path, problems }) => {
            if json {
                println!("{}", serde_json::json!({"ok": false, "problems": problems}));
            } else {
                eprintln!("{path}: {} problem(s)", problems.len());
                for p in &problems {
                    eprintln!("  {}/{p}", dir.display().to_string().trim_end_matches('/'));
                }
            }
            Ok(ExitCode::FAILURE)
        }
        Err(e) => Err(e.into()),
    }
}

fn bar(len: usize, what: &str) -> ProgressBar {
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

fn run_lint(
    dir: PathBuf,
    store: Option<PathBuf>,
    overlay: Option<PathBuf>,
    task: Option<String>,
    min: f64,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if !(0.0..=1.0).contains(&min) {
        anyhow::bail!("--min-mutation-score must be between 0 and 1, not {min}");
    }
    let world = super::load_world(&dir)?;
    let rubrics = RubricSet::load_with_overlay(&world, overlay.as_deref())?;
    let store = store.map(|p| Store::open(&p)).transpose()?;
    let options = LintOptions {
        task,
        min_mutation_score: min,
    };
    let n = if options.task.is_some() {
        1
    } else {
        world.tasks.len()
    };
    let progress = bar(n, "linting");
    let report = lint::lint(&world, &rubrics, store.as_ref(), &options, &|| {
        progress.inc(1)
    })?;
    progress.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_report(&report));
    }
    Ok(if report.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn run_audit(dir: PathBuf, task: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let world = super::load_world(&dir)?;
    let rubrics = RubricSet::load(&world)?;
    let options = LintOptions {
        task,
        ..LintOptions::default()
    };
    let n = if options.task.is_some() {
        1
    } else {
        world.tasks.len()
    };
    let progress = bar(n, "auditing");
    let report = lint::lint(&world, &rubrics, None, &options, &|| progress.inc(1))?;
    progress.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_audit(&report));
    }
    let missed = report
        .classes
        .iter()
        .any(|c| c.class.must_all_be_caught() && c.caught < c.total);
    Ok(if missed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// One cell: caught/counted, equivalents with `=`, `-` where the class
/// does not apply (no such mutant for the task).
fn cell(c: Option<&ClassScore>) -> String {
    match c {
        None => "-".into(),
        Some(c) if c.total == 0 => format!("={}", c.equivalent),
        Some(c) if c.equivalent > 0 => format!("{}/{} ={}", c.caught, c.total, c.equivalent),
        Some(c) => format!("{}/{}", c.caught, c.total),
    }
}

/// Which cheat classes each rubric catches, as a table (README shows it).
pub fn render_audit(r: &LintReport) -> String {
    let width = r
        .tasks
        .iter()
        .map(|t| t.task_id.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "rubric audit: {} {} ({} task(s)); caught/counted per cheat class, =n equivalent (a judgment call for detours), - does not apply\n",
        r.world_id,
        r.world_version,
        r.tasks.len()
    );
    let widths: Vec<usize> = MutantKind::CHEATS
        .iter()
        .map(|k| k.name().len().max(7))
        .collect();
    out.push_str(&format!("  {:width$}", "task"));
    for (k, w) in MutantKind::CHEATS.iter().zip(&widths) {
        out.push_str(&format!("  {:w$}", k.name()));
    }
    let mut out = out.trim_end().to_string();
    out.push('\n');
    let row = |name: &str, classes: &[ClassScore]| {
        let mut line = format!("  {name:width$}");
        for (k, w) in MutantKind::CHEATS.iter().zip(&widths) {
            line.push_str(&format!(
                "  {:w$}",
                cell(classes.iter().find(|c| c.class == *k))
            ));
        }
        line.trim_end().to_string() + "\n"
    };
    for t in &r.tasks {
        out.push_str(&row(&t.task_id, &t.classes));
    }
    out.push_str(&row("all", &r.classes));
    let missed: Vec<String> = r
        .classes
        .iter()
        .filter(|c| c.class.must_all_be_caught() && c.caught < c.total)
        .map(|c| format!("{} ({} missed)", c.class.name(), c.total - c.caught))
        .collect();
    if missed.is_empty() {
        out.push_str("every rubric catches every cheat class that applies to it\n");
    } else {
        out.push_str(&format!("not caught everywhere: {}\n", missed.join(", ")));
    }
    out
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), |v| format!("{:.0}%", v * 100.0))
}

fn fmt_range(r: [f64; 2]) -> String {
    if (r[1] - r[0]).abs() < 1e-12 {
        format!("{:.2}", r[0])
    } else {
        format!("{:.2}–{:.2}", r[0], r[1])
    }
}

/// The lint report as a person reads it (also what docs/rubrics.md shows).
pub fn render_report(r: &LintReport) -> String {
    let mut out = String::new();
    let width = r.tasks.iter().map(|t| t.task_id.len()).max().unwrap_or(10);
    out.push_str(&format!(
        "rubric lint: {} {} ({} task(s))\n",
        r.world_id,
        r.world_version,
        r.tasks.len()
    ));
    for t in &r.tasks {
        let gold = if t.gold.is_empty() {
            "none".to_string()
        } else {
            t.gold
                .iter()
                .map(|g| fmt_range(g.range))
                .collect::<Vec<_>>()
                .join(",")
        };
        let nothing = t
            .do_nothing
            .as_ref()
            .map_or("-".to_string(), |d| fmt_range(d.range));
        let m = &t.mutation;
        let eq = if m.equivalent > 0 {
            format!(", {} equivalent", m.equivalent)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {} {:width$}  gold {gold}  do-nothing {nothing}  mutants {}/{} caught ({}){eq}\n",
            if t.ok { "ok  " } else { "FAIL" },
            t.task_id,
            m.caught,
            m.total,
            pct(m.score),
        ));
        for p in &t.problems {
            out.push_str(&format!("       - {p}\n"));
        }
        for s in t.mutants.iter().filter(|m| !m.caught && !m.equivalent) {
            out.push_str(&format!("       survived: {}\n", s.description));
        }
    }
    out.push_str(&format!(
        "passed {}/{} task(s); mutation score {} ({} of {} mutants caught, {} equivalent left out; threshold {:.0}%)\n",
        r.passed,
        r.tasks.len(),
        pct(r.mutation_score),
        r.caught,
        r.mutants,
        r.equivalent,
        r.min_mutation_score * 100.0
    ));
    let classes: Vec<String> = r
        .classes
        .iter()
        .filter(|c| !c.class.in_mutation_score())
        .map(|c| {
            let eq = if c.equivalent > 0 {
                format!(" ={}", c.equivalent)
            } else {
                String::new()
            };
            format!("{} {}/{}{eq}", c.class.name(), c.caught, c.total)
        })
        .collect();
    if !classes.is_empty() {
        out.push_str(&format!("cheat classes caught: {}\n", classes.join(", ")));
    }
    out
}

fn run_derive(
    dir: PathBuf,
    from_solution: bool,
    task: Option<String>,
    force: bool,
) -> anyhow::Result<ExitCode> {
    if !from_solution {
        anyhow::bail!("say what to derive from: --from-solution (the task's reference solution) is the only source so far");
    }
    let world = super::load_world(&dir)?;
    let options = DeriveOptions {
        task,
        overwrite: force,
    };
    let summary = derive::derive_all(&world, &options)?;
    for s in &summary.skipped {
        eprintln!("skipped {s}");
    }
    eprintln!(
        "wrote {} rubric(s) to {}/rubrics ({} skipped)",
        summary.written.len(),
        dir.display(),
        summary.skipped.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn run_judge(
    dir: PathBuf,
    store: PathBuf,
    episode: String,
    criterion: String,
    (given_met, level): (Option<bool>, Option<String>),
    reason: String,
    judge: String,
) -> anyhow::Result<ExitCode> {
    let world = super::load_world(&dir)?;
    let store = Store::open(&store)?;
    let record = store.episode(&episode)?;
    let rubric = Rubric::load(&world, &record.task_id)?
        .with_context(|| format!("task {} of episode {episode} has no rubric", record.task_id))?;
    let c = rubric.criterion(&criterion).with_context(|| {
        format!(
            "the rubric of task {} has no criterion `{criterion}`",
            record.task_id
        )
    })?;
    if c.kind != understudy::rubric::CriterionKind::Judged {
        anyhow::bail!("criterion `{criterion}` is checked automatically ({:?}); only judged criteria take a grade", c.kind);
    }
    let met = understudy::grading::met_at_level(c, given_met.unwrap_or(false), level.as_deref())?;
    if given_met.is_some_and(|m| m != met) {
        anyhow::bail!(
            "--met {} contradicts --level \"{}\", which counts as {}; give only --level",
            !met,
            level.as_deref().unwrap_or_default(),
            if met { "met" } else { "not met" }
        );
    }
    let level = level
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty());
    let j = Judgment {
        criterion_id: criterion.clone(),
        criterion_hash: Some(c.hash.clone()),
        met,
        reason,
        judge,
        at: String::new(),
        level: level.clone(),
    };
    store.save_judgment(&episode, &JudgmentRecord::from(&j))?;
    let grade = match &level {
        Some(l) => format!("“{l}” ({})", if met { "met" } else { "not met" }),
        None => (if met { "met" } else { "not met" }).to_string(),
    };
    eprintln!("recorded: {criterion} {grade} for episode {episode}");
    Ok(ExitCode::SUCCESS)
}
