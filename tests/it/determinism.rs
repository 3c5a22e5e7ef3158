//! The same world, task and actions give byte-identical observations and
//! final state: every bundled world's every task solution, run twice on
//! independent episodes.

use understudy_testkit as common;

use std::sync::Arc;

use understudy::{Action, Episode, World};

fn run_solution(world: &Arc<World>, task: &str) -> Vec<u8> {
    let mut ep = Episode::new(Arc::clone(world)).expect("episode");
    ep.set_enforce_limits(false);
    let mut out = serde_json::to_vec(&ep.reset(task, 42).expect("reset")).expect("json");
    for step in &world.task(task).expect("task").solution {
        let action = Action::from_json(step).expect("solution actions parse");
        let result = ep.step(&action).expect("step");
        out.extend(serde_json::to_vec(&result).expect("json"));
    }
    out.extend(serde_json::to_vec(&ep.changes().expect("changes")).expect("json"));
    out
}

#[test]
fn every_fixture_world_loads() {
    let worlds = common::fixture_worlds();
    assert!(!worlds.is_empty());
    for dir in worlds {
        if let Err(e) = World::load(&dir) {
            panic!("{} does not load:\n{e}", dir.display());
        }
    }
}

#[test]
fn every_task_solution_replays_byte_identically() {
    let mut checked = 0;
    for dir in common::fixture_worlds()
        .into_iter()
        .chain([common::mini_dir()])
    {
        let world = Arc::new(World::load(&dir).expect("world loads"));
        for task in world.tasks.keys() {
            let a = run_solution(&world, task);
            let b = run_solution(&world, task);
            assert!(
                a == b,
                "{}: task {task} is not deterministic",
                world.meta.id
            );
            checked += 1;
        }
    }
    assert!(checked > 0);
}

#[test]
fn support_desk_solutions_succeed_where_they_should() {
    // Every reference step of the support desk succeeds, except steps the
    // task marks as expected to fail (a guard the expert is meant to hit).
    let dir = common::repo().join("fixtures/worlds/support-desk");
    let world = Arc::new(World::load(&dir).expect("support-desk loads"));
    assert!(
        world.tasks.len() >= 5,
        "support-desk needs at least 5 tasks"
    );
    assert!(
        world.tools.len() >= 8,
        "support-desk needs at least 8 tools"
    );
    assert!(
        world.views.len() >= 3,
        "support-desk needs at least 3 views"
    );
    for (id, task) in &world.tasks {
        let mut ep = Episode::new(Arc::clone(&world)).unwrap();
        ep.reset(id, 0).unwrap();
        for step in &task.solution {
            let action = Action::from_json(step).unwrap();
            let out = ep.step(&action).unwrap();
            assert!(
                out.observation.ok,
                "task {id}: {action:?} failed: {}",
                out.observation.text
            );
        }
    }
}

/// A world loaded from its compiled image (the seeded database kept from
/// an earlier load, in memory or as a file under the cache folder) gives
/// byte-identical observations and final state to one seeded afresh.
#[test]
fn a_world_from_its_image_behaves_byte_for_byte_like_a_seeded_one() {
    let dir = common::copy_world(&common::mini_dir());
    // Its own content, so no other test's load has made an image of it.
    let schema = dir.path().join("schema.sql");
    let text = std::fs::read_to_string(&schema).expect("schema");
    std::fs::write(
        &schema,
        format!("-- determinism {:?}\n{text}", std::time::SystemTime::now()),
    )
    .expect("write");
    let cache = tempfile::tempdir().expect("cache");
    let seeded = Arc::new(World::load_cached(dir.path(), Some(cache.path())).expect("loads"));
    let from_image = Arc::new(World::load_cached(dir.path(), Some(cache.path())).expect("loads"));
    assert!(
        std::fs::read_dir(cache.path().join("world-images"))
            .expect("the image folder")
            .count()
            == 1,
        "one image file was written"
    );
    for task in seeded.tasks.keys() {
        assert_eq!(
            run_solution(&seeded, task),
            run_solution(&from_image, task),
            "task {task}"
        );
    }
}
