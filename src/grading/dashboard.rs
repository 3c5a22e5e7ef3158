//! One task's scores at a glance: how runs by experts and by agents score
//! (a distribution in tenths), how often each criterion comes out right,
//! and pass^k. Every run is scored afresh under the task's current rubric,
//! with the grades people stored, so the picture matches what grading
//! shows; nothing is written.

use std::sync::Arc;

use serde::Serialize;

use crate::episode::Episode;
use crate::error::Result;
use crate::rubric::batch::summarize;
use crate::rubric::{self, Judgment, Rubric, Score};
use crate::store::{Actor, EpisodeRecord, Store};
use crate::world::World;

/// Runs whose score falls in `[low, high)` (the last bin includes 1).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ScoreBin {
    /// Lowest score in the bin.
    pub low: f64,
    /// Highest score, exclusive except for the last bin.
    pub high: f64,
    /// Experts' runs in the bin.
    pub experts: u32,
    /// Agents' runs in the bin.
    pub agents: u32,
}

/// How often one criterion came out right (met when it must happen, not
/// met when it must not).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CriterionRight {
    /// The criterion's id.
    pub id: String,
    /// The behaviour, in plain words.
    pub description: String,
    /// Runs where it came out right, by experts and by agents.
    pub experts_right: u32,
    /// Experts' runs where it was decided (not pending).
    pub experts_decided: u32,
    /// Agents' runs where it came out right.
    pub agents_right: u32,
    /// Agents' runs where it was decided.
    pub agents_decided: u32,
}

/// The share of k runs of a task that all pass, estimated from the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PassAtK {
    /// How many runs.
    pub k: u32,
    /// The chance that k runs all pass.
    pub value: f64,
}

/// One task's scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TaskDashboard {
    /// The task.
    pub task_id: String,
    /// Experts' runs scored.
    pub expert_runs: u32,
    /// Agents' runs scored.
    pub agent_runs: u32,
    /// Runs still waiting for a person's grade (no value yet).
    pub pending: u32,
    /// Mean score of experts' runs with a value.
    pub expert_mean: Option<f64>,
    /// Mean score of agents' runs with a value.
    pub agent_mean: Option<f64>,
    /// Share of decided experts' runs that passed.
    pub expert_pass_rate: Option<f64>,
    /// Share of decided agents' runs that passed.
    pub agent_pass_rate: Option<f64>,
    /// Scores in tenths.
    pub bins: Vec<ScoreBin>,
    /// Each criterion, in the rubric's order.
    pub criteria: Vec<CriterionRight>,
    /// pass^k of the agents' runs, k = 1 up to their number (at most 8).
    pub agent_pass_k: Vec<PassAtK>,
}

/// The dashboard of `rubric`'s task over `runs` (finished runs of it).
pub fn task_dashboard(
    store: &Store,
    world: &Arc<World>,
    rubric: &Rubric,
    runs: &[EpisodeRecord],
) -> Result<TaskDashboard> {
    let mut experts: Vec<Score> = Vec::new();
    let mut agents: Vec<Score> = Vec::new();
    for record in runs {
        let run = store.trajectory(&record.id)?;
        let judgments: Vec<Judgment> = store
            .judgments(&record.id)?
            .into_iter()
            .map(Judgment::from)
            .collect();
        let mut episode = Episode::new(Arc::clone(world))?;
        episode.set_expert(record.actor.is_expert());
        let score = rubric::replay_and_score(
            &mut episode,
            rubric,
            record.seed,
            &run.actions(),
            &judgments,
        )?;
        match record.actor {
            Actor::Expert { .. } => experts.push(score),
            Actor::Agent { .. } => agents.push(score),
        }
    }
    let mut bins: Vec<ScoreBin> = (0..10)
        .map(|i| ScoreBin {
            low: i as f64 / 10.0,
            high: (i + 1) as f64 / 10.0,
            experts: 0,
            agents: 0,
        })
        .collect();
    for (scores, is_agent) in [(&experts, false), (&agents, true)] {
        for v in scores.iter().filter_map(|s| s.value) {
            let i = ((v * 10.0).floor() as usize).min(9);
            if let Some(bin) = bins.get_mut(i) {
                if is_agent {
                    bin.agents += 1;
                } else {
                    bin.experts += 1;
                }
            }
        }
    }
    let right = |scores: &[Score], id: &str| -> (u32, u32) {
        let mut out = (0, 0);
        for r in scores
            .iter()
            .flat_map(|s| s.criteria.iter().filter(|c| c.id == id))
        {
            if let Some(met) = r.met {
                out.1 += 1;
                out.0 += u32::from(met == (r.points >= 0.0 || r.gate));
            }
        }
        out
    };
    let criteria = rubric
        .criteria
        .iter()
        .map(|c| {
            let (experts_right, experts_decided) = right(&experts, &c.id);
            let (agents_right, agents_decided) = right(&agents, &c.id);
            CriterionRight {
                id: c.id.clone(),
                description: c.description.clone(),
                experts_right,
                experts_decided,
                agents_right,
                agents_decided,
            }
        })
        .collect();
    let (of_experts, of_agents) = (summarize(&experts, 0), summarize(&agents, 0));
    Ok(TaskDashboard {
        task_id: rubric.task_id.clone(),
        expert_runs: experts.len() as u32,
        agent_runs: agents.len() as u32,
        pending: (of_experts.pending + of_agents.pending) as u32,
        expert_mean: of_experts.mean,
        agent_mean: of_agents.mean,
        expert_pass_rate: of_experts.pass_rate,
        agent_pass_rate: of_agents.pass_rate,
        bins,
        criteria,
        agent_pass_k: of_agents
            .pass_k
            .iter()
            .filter(|p| p.k <= 8)
            .map(|p| PassAtK {
                k: p.k as u32,
                value: p.value,
            })
            .collect(),
    })
}
