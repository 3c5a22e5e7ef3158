//! Rubric lint speed: one task's rubric linted against its gold runs and
//! every mutant of them, as the rubric editor's "Lint" button does.
//!
//! Run with `cargo bench --bench lint`. Target: one support-desk task in at
//! most 1 s, so an annotator gets the verdict while still looking at the
//! criterion they just wrote (the rubric editor's e2e test used to time this
//! in the window; a timing belongs here, where it is measured, not asserted).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use understudy::rubric::lint::{self, LintOptions};
use understudy::rubric::RubricSet;
use understudy::World;

fn lint_one_task(c: &mut Criterion) {
    let world = Arc::new(
        World::load(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/worlds/support-desk"))
            .expect("support-desk loads"),
    );
    let rubrics = RubricSet::load(&world).expect("rubrics load");
    let rubric = Arc::clone(rubrics.get("duplicate-charge").expect("rubric"));
    let options = LintOptions::default();
    let once =
        lint::lint_rubric(&world, Arc::clone(&rubric), None, &options, &|_| {}).expect("lint runs");
    assert!(once.ok, "the bundled rubric passes its own lint");

    let mut group = c.benchmark_group("lint");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("support_desk_duplicate_charge/one_task", |b| {
        b.iter(|| {
            lint::lint_rubric(&world, Arc::clone(&rubric), None, &options, &|_| {}).expect("lint")
        })
    });
    group.finish();
}

criterion_group!(benches, lint_one_task);
criterion_main!(benches);
