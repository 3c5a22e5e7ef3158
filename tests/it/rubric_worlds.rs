//! The bundled worlds' rubrics: every task has one, every one passes lint,
//! and agents that do nothing — or only say the right words — score 0.

use understudy_testkit as common;

use std::sync::Arc;

use understudy::rubric::batch::{self, RunToScore};
use understudy::rubric::lint::{self, LintOptions};
use understudy::rubric::{self, RubricSet};
use understudy::trajectory::ActionList;
use understudy::{Action, Episode, World};

fn world(name: &str) -> Arc<World> {
    Arc::new(
        World::load(common::repo().join("fixtures/worlds").join(name))
            .expect("bundled world loads"),
    )
}

fn solution(world: &World, task: &str) -> Vec<Action> {
    world
        .task(task)
        .expect("task")
        .solution
        .iter()
        .map(|a| Action::from_json(a).expect("action"))
        .collect()
}

fn assert_lint_passes(world: &Arc<World>, tasks: &[String]) {
    let rubrics = RubricSet::load(world).expect("rubrics load");
    let mut failures = Vec::new();
    for task in tasks {
        let options = LintOptions {
            task: Some(task.clone()),
            ..LintOptions::default()
        };
        let report = lint::lint(world, &rubrics, None, &options, &|| {}).expect("lint runs");
        for t in report.tasks.iter().filter(|t| !t.ok) {
            failures.push(format!("{}: {:?}", t.task_id, t.problems));
        }
        for t in &report.tasks {
            assert!(
                t.mutation.score.unwrap_or(1.0) >= 0.9,
                "{}: {:?}",
                t.task_id,
                t.mutation
            );
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn every_task_of_every_bundled_world_has_a_rubric() {
    for name in [
        "support-desk",
        "contract-review",
        "underwriting",
        "month-end-close",
        "tau-retail",
        "tau-airline",
    ] {
        let w = world(name);
        let rubrics = RubricSet::load(&w).expect("rubrics load");
        let missing: Vec<&String> = w
            .tasks
            .keys()
            .filter(|t| rubrics.get(t).is_none())
            .collect();
        assert!(missing.is_empty(), "{name}: no rubric for {missing:?}");
    }
}

#[test]
fn support_desk_rubrics_pass_lint() {
    let w = world("support-desk");
    let tasks: Vec<String> = w.tasks.keys().cloned().collect();
    assert_lint_passes(&w, &tasks);
}

/// The seed's simulated jobs (law firm, insurer, finance team): gold 1,
/// doing nothing 0, every mutant and cheat class caught.
#[test]
fn seed_job_rubrics_pass_lint() {
    for name in ["contract-review", "underwriting", "month-end-close"] {
        let w = world(name);
        let tasks: Vec<String> = w.tasks.keys().cloned().collect();
        assert!(tasks.len() >= 8, "{name}: {} tasks", tasks.len());
        assert_lint_passes(&w, &tasks);
    }
}

#[test]
fn tau_airline_rubrics_pass_lint() {
    let w = world("tau-airline");
    let tasks: Vec<String> = w.tasks.keys().cloned().collect();
    assert_lint_passes(&w, &tasks);
}

#[test]
fn tau_retail_rubrics_pass_lint_on_a_sample_and_gold_scores_one_everywhere() {
    let w = world("tau-retail");
    let sample: Vec<String> = w.tasks.keys().step_by(25).cloned().collect();
    assert_lint_passes(&w, &sample);
    let rubrics = RubricSet::load(&w).expect("rubrics load");
    let trajectories: Vec<RunToScore> = w
        .tasks
        .keys()
        .map(|t| RunToScore {
            run: ActionList::new(t, solution(&w, t)),
            judgments: Vec::new(),
            expert: false,
        })
        .collect();
    let scores = batch::score_all(&w, &rubrics, &trajectories, None, &|| {}).expect("scored");
    let below: Vec<&str> = scores
        .iter()
        .filter(|s| s.value != Some(1.0))
        .map(|s| s.task_id.as_str())
        .collect();
    assert!(below.is_empty(), "gold below 1.0: {below:?}");
    let nothing: Vec<RunToScore> = trajectories
        .into_iter()
        .map(|t| RunToScore {
            run: ActionList {
                actions: Vec::new(),
                ..t.run
            },
            ..t
        })
        .collect();
    let scores = batch::score_all(&w, &rubrics, &nothing, None, &|| {}).expect("scored");
    assert!(
        scores.iter().all(|s| s.value == Some(0.0)),
        "doing nothing must score 0 on every retail task"
    );
}

#[test]
fn doing_nothing_or_only_talking_scores_zero_where_the_task_needs_an_action() {
    let w = world("support-desk");
    let mut episode = Episode::new(Arc::clone(&w)).expect("episode");
    for task in w.tasks.keys() {
        let r = rubric::Rubric::load(&w, task)
            .expect("loads")
            .expect("exists");
        let nothing = rubric::replay_and_score(&mut episode, &r, 0, &[], &[]).expect("scored");
        assert_eq!(nothing.range, [0.0, 0.0], "{task}: doing nothing");

        // The gold run's words, without any of its actions.
        let words: Vec<Action> = solution(&w, task)
            .into_iter()
            .filter(|a| matches!(a, Action::Message { .. }))
            .collect();
        let talk = rubric::replay_and_score(&mut episode, &r, 0, &words, &[]).expect("scored");
        let said_something = talk.criteria.iter().any(|c| {
            c.kind == rubric::CriterionKind::Message && c.points > 0.0 && c.met == Some(true)
        });
        assert!(
            said_something,
            "{task}: the words alone meet message criteria"
        );
        if task == "renewal-question" {
            // Answering is the task here; closing the ticket is what is missing.
            assert!(talk.range[1] < 1.0, "{task}: {:?}", talk.range);
        } else {
            assert_eq!(
                talk.range,
                [0.0, 0.0],
                "{task}: saying the right words without doing it"
            );
            assert!(!talk.failed_gates.is_empty());
        }
    }
}

/// The HR leave desk was written from the docs alone by a new author
/// (its log: tests/worlds/hr-leave-desk/AUTHORING.md); it keeps loading
/// and its rubrics keep passing lint.
#[test]
fn the_world_written_from_the_docs_passes_lint() {
    let w =
        Arc::new(World::load(common::repo().join("tests/worlds/hr-leave-desk")).expect("it loads"));
    let tasks: Vec<String> = w.tasks.keys().cloned().collect();
    assert_eq!(tasks.len(), 3);
    assert_lint_passes(&w, &tasks);
}
