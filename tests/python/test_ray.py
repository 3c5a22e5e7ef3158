"""Episodes on a real Ray cluster (a head on loopback that scripts/python.sh
starts and stops): 2 actors, one server and one store each, results
gathered as a dataset. Prints episodes/s with 1 and 2 actors."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import datasets
import pytest
import ray

from understudy_gym.ray_runner import Job, SolutionPolicies, run_on_ray

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = REPO / "fixtures" / "worlds" / "support-desk"
BINARY = os.environ.get("UNDERSTUDY_BIN", str(REPO / "target" / "debug" / "understudy"))
# Tasks whose rubric has no judged criterion, so the solution's reward is
# exactly 1 without a judge.
TASKS = ["duplicate-charge", "renewal-question", "upgrade-with-verification"]


@pytest.fixture(scope="module")
def cluster():
    address = os.environ.get("UNDERSTUDY_RAY_ADDRESS")
    assert address, "UNDERSTUDY_RAY_ADDRESS is not set: scripts/python.sh starts a Ray head and sets it"
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def stored(store: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT task_id, status FROM episodes ORDER BY created_at").fetchall()


def test_two_actors_run_the_episodes_and_each_writes_its_own_store(cluster, tmp_path):
    jobs = [Job(task, seed) for seed in range(3) for task in TASKS]
    rows, elapsed = run_on_ray(
        jobs, SolutionPolicies([SUPPORT_DESK]), world_dirs=[SUPPORT_DESK], store_dir=tmp_path, num_actors=2, binary=BINARY
    )
    assert [(r["task_id"], r["seed"]) for r in rows] == [(j.task_id, j.seed) for j in jobs]
    assert {r["actor"] for r in rows} == {0, 1}
    assert all(r["terminated"] and not r["truncated"] for r in rows)
    # The reference solutions pass their own rubrics.
    assert all(r["reward"] == 1.0 for r in rows), [(r["task_id"], r["reward"]) for r in rows]
    for actor in (0, 1):
        store = tmp_path / f"actor-{actor}.sqlite"
        mine = [r for r in rows if r["actor"] == actor]
        assert all(r["store"] == str(store) for r in mine)
        assert sorted(stored(store)) == sorted((r["task_id"], "submitted") for r in mine)
    ds = datasets.Dataset.from_list(rows)
    assert ds.num_rows == len(jobs) and "record_id" in ds.column_names
    print(f"ray: 2 actors, {len(jobs)} episodes in {elapsed:.2f} s ({len(jobs) / elapsed:.1f} episodes/s)")


def test_throughput_with_one_and_two_actors(cluster, tmp_path):
    # 96 episodes: a few seconds each way, so one slow moment on a loaded
    # machine does not decide the figures (24 took a fraction of a second).
    jobs = [Job(task, seed) for seed in range(24) for task in TASKS + ["cancel-no-refund"]]
    rates, rewards = {}, {}
    for n in (1, 2):
        rows, elapsed = run_on_ray(
            jobs, SolutionPolicies([SUPPORT_DESK]), world_dirs=[SUPPORT_DESK], store_dir=tmp_path / f"n{n}", num_actors=n, binary=BINARY
        )
        assert len(rows) == len(jobs) and {r["actor"] for r in rows} == set(range(n))
        rates[n] = len(jobs) / elapsed
        rewards[n] = [(r["task_id"], r["seed"], r["reward"], r["steps"]) for r in rows]
    assert rewards[1] == rewards[2], "the same episodes give the same rewards however they are spread"
    print(f"ray: {len(jobs)} episodes: 1 actor {rates[1]:.1f}/s, 2 actors {rates[2]:.1f}/s")


def test_bad_arguments_are_clear_errors(cluster, tmp_path):
    with pytest.raises(ValueError, match="num_actors must be at least 1"):
        run_on_ray([Job("duplicate-charge")], SolutionPolicies([SUPPORT_DESK]), world_dirs=[SUPPORT_DESK], store_dir=tmp_path, num_actors=0)
    with pytest.raises(KeyError, match="no task 'nope'"):
        SolutionPolicies([SUPPORT_DESK])("nope", 0)
    assert run_on_ray([], SolutionPolicies([SUPPORT_DESK]), world_dirs=[SUPPORT_DESK], store_dir=tmp_path) == ([], 0.0)
