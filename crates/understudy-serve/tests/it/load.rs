//! 64 concurrent agent episodes over HTTP on loopback, against a real
//! store at full durability. Bounded: 64 clients, one reference solution
//! each (under 700 requests in all), every request with a timeout.
//! Checks that no episode sees another's observations, that every step is
//! recorded under the right episode, and that the cap holds under load.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::json;
use understudy::store::{Actor, EpisodeFilter, EpisodeStatus};
use understudy::Action;
use understudy_serve::ServeConfig;

const CLIENTS: usize = 64;

#[test]
fn sixty_four_concurrent_episodes_stay_isolated_and_recorded_under_a_hard_cap() {
    let h = Arc::new(Harness::with_worlds(
        vec![support_desk()],
        ServeConfig {
            max_concurrent: CLIENTS,
            ..ServeConfig::default()
        },
        None,
    ));
    let world = support_desk();
    let tasks: Vec<String> = world.tasks.keys().cloned().collect();
    let started = Instant::now();
    // Everyone resets, then the main thread checks the cap while all 64 are
    // open, then everyone plays.
    let all_open = Arc::new(Barrier::new(CLIENTS + 1));
    let cap_checked = Arc::new(Barrier::new(CLIENTS + 1));
    let mut handles = Vec::new();
    for i in 0..CLIENTS {
        let h = Arc::clone(&h);
        let world = Arc::clone(&world);
        let task = tasks[i % tasks.len()].clone();
        let (all_open, cap_checked) = (Arc::clone(&all_open), Arc::clone(&cap_checked));
        handles.push(std::thread::spawn(move || {
            let seed = i as u64;
            let actions = solution(&world, &task);
            let expected = expected_observations(&world, &task, seed, &actions);
            let out = h.reset(json!({"task_id": task, "seed": seed, "model": format!("load-{i}")}));
            let id = out["episode_id"].as_str().expect("id").to_string();
            all_open.wait();
            cap_checked.wait();
            for (n, (action, want)) in actions.iter().zip(&expected).enumerate() {
                let (status, out) = h.step(&id, action.clone());
                assert_eq!(status, 200, "client {i} step {n}: {out}");
                assert_eq!(
                    out["episode_id"],
                    id.as_str(),
                    "client {i}: answered for another episode"
                );
                assert_eq!(out["info"]["task_id"], task.as_str(), "client {i}");
                assert_eq!(
                    out["info"]["steps"],
                    n + 1,
                    "client {i}: another client's step was counted"
                );
                assert_eq!(&out["observation"], want, "client {i} step {n}: cross-talk");
            }
            let (status, end) = h.step(&id, json!({"submit": true}));
            assert_eq!(
                (status, end["done"].as_bool()),
                (200, Some(true)),
                "client {i}: {end}"
            );
            (id, task, actions)
        }));
    }
    all_open.wait();
    let (status, out) = h.post("/reset", &json!({"task_id": tasks[0]}));
    assert_eq!(status, 429, "the 65th episode must be refused: {out}");
    assert_eq!(error_code(&out), "too_many_episodes");
    let (_, health) = h.get("/health");
    assert_eq!(health["episodes"]["running"], CLIENTS);
    cap_checked.wait();

    let mut runs = Vec::new();
    for (i, t) in handles.into_iter().enumerate() {
        runs.push(t.join().unwrap_or_else(|_| panic!("client {i} failed")));
    }
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(120), "took {elapsed:?}");

    let stored = h
        .store()
        .episodes(&EpisodeFilter {
            actor_kind: Some("agent".into()),
            ..Default::default()
        })
        .expect("episodes");
    assert_eq!(stored.len(), CLIENTS);
    for (i, (id, task, actions)) in runs.iter().enumerate() {
        let record = h.store().episode(id).expect("recorded");
        assert_eq!(
            record.actor,
            Actor::Agent {
                model: format!("load-{i}")
            }
        );
        assert_eq!(&record.task_id, task);
        assert_eq!(record.seed, i as u64);
        assert_eq!(record.status, EpisodeStatus::Submitted);
        let steps = h.store().steps(id).expect("steps");
        let sent: Vec<Action> = actions
            .iter()
            .map(|a| Action::from_json(a).unwrap())
            .collect();
        let kept: Vec<Action> = steps.iter().map(|s| s.action.clone()).collect();
        assert_eq!(
            kept, sent,
            "client {i}: every step recorded, in order, under its own episode"
        );
    }
    let total: usize = runs.iter().map(|r| r.2.len()).sum();
    let (_, health) = h.get("/health");
    assert_eq!(health["episodes"]["running"], 0);
    eprintln!("{CLIENTS} episodes, {total} steps in {elapsed:?}");
}
