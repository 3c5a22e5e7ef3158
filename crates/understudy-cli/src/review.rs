//! `understudy review list|approve|reject`: the review queue for teams
//! without the desktop app. Approved episodes are gold for `rubric lint
//! --store` and what `export --status approved` exports; a rejected one
//! goes back to its expert with the reviewer's comment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;
use understudy::store::{Decision, EpisodeFilter, EpisodeStatus, EpisodeSummary, Review, Store};

#[derive(Subcommand)]
pub enum ReviewCommand {
    /// List episodes to review (submitted ones unless --status says otherwise).
    List {
        /// The trajectory store.
        #[arg(long, required_unless_present = "hub", conflicts_with = "hub")]
        store: Option<PathBuf>,
        /// List a team hub's queue instead (`--hub URL --token T`): the
        /// episodes the token's person may see.
        #[command(flatten)]
        hub: crate::hub::OptionalHub,
        /// Which episodes: submitted (waiting for review), approved, rejected, or all.
        #[arg(long, value_enum, default_value_t = StatusArg::Submitted)]
        status: StatusArg,
        /// Only episodes of this task (id).
        #[arg(long, value_name = "ID")]
        task: Option<String>,
        /// Only episodes recorded by this expert (id).
        #[arg(long, value_name = "ID")]
        expert: Option<String>,
        /// Print the list as JSON (one array).
        #[arg(long)]
        json: bool,
    },
    /// Approve a submitted episode: it becomes gold.
    Approve {
        #[command(flatten)]
        which: Which,
        /// A note for the expert.
        #[arg(long, default_value = "")]
        comment: String,
    },
    /// Reject a submitted episode; it goes back to its expert with the comment.
    Reject {
        #[command(flatten)]
        which: Which,
        /// What the expert should fix (required).
        #[arg(long)]
        comment: String,
    },
}

/// The episode a decision is about, and who decides.
#[derive(Args)]
pub struct Which {
    /// The trajectory store.
    #[arg(long, required_unless_present = "hub", conflicts_with = "hub")]
    store: Option<PathBuf>,
    /// Review on a team hub instead (`--hub URL --token T`): the decision
    /// is the token's person's, final as in a local store.
    #[command(flatten)]
    hub: crate::hub::OptionalHub,
    /// The episode's id (from `review list`).
    #[arg(long, value_name = "ID")]
    episode: String,
    /// Who reviewed (with --store; on a hub it is the token's person).
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "hub",
        conflicts_with = "hub"
    )]
    reviewer: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    Submitted,
    Approved,
    Rejected,
    All,
}

impl StatusArg {
    fn status(self) -> Option<EpisodeStatus> {
        match self {
            StatusArg::Submitted => Some(EpisodeStatus::Submitted),
            StatusArg::Approved => Some(EpisodeStatus::Approved),
            StatusArg::Rejected => Some(EpisodeStatus::Rejected),
            StatusArg::All => None,
        }
    }
}

pub fn run(cmd: ReviewCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ReviewCommand::List {
            store,
            hub,
            status,
            task,
            expert,
            json,
        } => {
            let rows = match (store, hub.connect()?) {
                (Some(store), _) => {
                    let filter = EpisodeFilter {
                        task_id: task,
                        status: status.status(),
                        actor_kind: expert.as_ref().map(|_| "expert".to_string()),
                        actor_id: expert,
                        ..EpisodeFilter::default()
                    };
                    open_existing(&store, false)?.episode_summaries(&filter)?
                }
                (None, Some(hub)) => hub_queue(&hub, status, task, expert)?,
                (None, None) => anyhow::bail!("give --store FILE or --hub URL"),
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&rows_json(&rows))?);
            } else if rows.is_empty() {
                eprintln!("no episodes match");
            } else {
                print!("{}", table(&rows));
            }
            Ok(ExitCode::SUCCESS)
        }
        ReviewCommand::Approve { which, comment } => decide(&which, Decision::Approve, &comment),
        ReviewCommand::Reject { which, comment } => decide(&which, Decision::Reject, &comment),
    }
}

/// The hub's episodes the caller sees, filtered, each with its latest
/// review: the same rows a local store's queue gives.
fn hub_queue(
    hub: &understudy_hub::client::Hub,
    status: StatusArg,
    task: Option<String>,
    expert: Option<String>,
) -> anyhow::Result<Vec<EpisodeSummary>> {
    let query = understudy_hub::client::EpisodeQuery {
        world: None,
        task,
        status: status.status(),
        expert,
    };
    let mut last: HashMap<String, Review> = HashMap::new();
    for review in hub.reviews(0)? {
        match last.get(&review.episode_id) {
            Some(seen) if seen.id > review.id => {}
            _ => {
                last.insert(review.episode_id.clone(), review);
            }
        }
    }
    hub.episodes(&query)?
        .into_iter()
        .map(|row| {
            Ok(EpisodeSummary {
                last_review: last.remove(&row.record.id),
                kept_steps: u32::try_from(row.kept_steps)?,
                record: row.record,
            })
        })
        .collect()
}

/// Records the decision; the store refuses, changing nothing, an episode
/// that is missing, not submitted or already decided.
fn decide(which: &Which, decision: Decision, comment: &str) -> anyhow::Result<ExitCode> {
    let review = match (&which.store, which.hub.connect()?) {
        (Some(store), _) => open_existing(store, true)?.add_review(
            &which.episode,
            which.reviewer.as_deref().unwrap_or_default(),
            decision,
            comment,
        )?,
        (None, Some(hub)) => hub.review(&which.episode, decision, comment)?,
        (None, None) => anyhow::bail!("give --store FILE or --hub URL"),
    };
    let done = match decision {
        Decision::Approve => "approved (gold)",
        Decision::Reject => "rejected (back to its expert)",
    };
    eprintln!("episode {} {done} by {}", which.episode, review.reviewer);
    Ok(ExitCode::SUCCESS)
}

/// Reviewing a mistyped path must not create an empty store; listing
/// also works on a store that cannot be written.
fn open_existing(path: &Path, write: bool) -> anyhow::Result<Store> {
    if !path.is_file() {
        anyhow::bail!("there is no store at {}", path.display());
    }
    Ok(if write {
        Store::open(path)?
    } else {
        Store::open_for_reading(path)?
    })
}

fn expert_of(s: &EpisodeSummary) -> String {
    match &s.record.actor {
        understudy::store::Actor::Expert { id } => id.clone(),
        understudy::store::Actor::Agent { model } => format!("agent:{model}"),
    }
}

fn last_review(s: &EpisodeSummary) -> String {
    let Some(r) = &s.last_review else {
        return "-".into();
    };
    let mut text = format!("{} by {} at {}", r.decision.as_str(), r.reviewer, r.at);
    if !r.comment.trim().is_empty() {
        text.push_str(&format!(": {}", r.comment.trim()));
    }
    text
}

fn rows_json(rows: &[EpisodeSummary]) -> serde_json::Value {
    rows.iter()
        .map(|s| {
            json!({
                "episode": s.record.id,
                "world": s.record.world_id,
                "task": s.record.task_id,
                "actor": s.record.actor,
                "status": s.record.status.as_str(),
                "steps": s.kept_steps,
                "submitted_at": s.record.submitted_at,
                "last_review": s.last_review,
            })
        })
        .collect()
}

/// Aligned columns; the last one (the review, with its comment) runs on.
fn table(rows: &[EpisodeSummary]) -> String {
    let header = [
        "episode",
        "world",
        "task",
        "expert",
        "status",
        "steps",
        "last review",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|s| {
            [
                s.record.id.clone(),
                s.record.world_id.clone(),
                s.record.task_id.clone(),
                expert_of(s),
                s.record.status.as_str().to_string(),
                s.kept_steps.to_string(),
                last_review(s),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[&str]| {
        let mut out = String::new();
        for (i, (c, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                out.push_str(c);
            } else {
                out.push_str(&format!("{c:w$}  "));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(&header);
    for row in &cells {
        out.push_str(&line(&row.each_ref().map(String::as_str)));
    }
    out
}
