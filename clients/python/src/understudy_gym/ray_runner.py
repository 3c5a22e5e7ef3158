"""Episodes on Ray actors, for when one machine is not enough.

Each actor starts its own ``understudy serve --http`` on its node's loopback
and writes its own store, ``<store_dir>/actor-<i>.sqlite``: SQLite stores are
one writer per file, so actors never share one, and a node's disk is the
actor's. Episodes are dealt to the actors round robin; each actor runs its
share one after another (the engine is fast; the policy is usually the slow
part, so give a real model's actors its own concurrency). Results come back
as :class:`EpisodeRow` dicts, ready for ``datasets.Dataset.from_list`` or
``ray.data.from_items``; the trajectories are in the actors' stores, for
``understudy export --store`` (or ``understudy import`` into one store).

On a cluster, ``store_dir`` must be a folder every node can write (each
actor writes only its own file in it), and the worlds must be at the same
path on every node.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .client import HttpServer
from .env import UnderstudyEnv
from .helpers import Policy, run_episode, scripted_policy
from .registration import tomllib

__all__ = ["Job", "EpisodeRow", "SolutionPolicies", "run_on_ray"]

#: Makes the policy for one job: ``policy_for(task_id, seed)``. It runs on
#: the actor, so it must be picklable (a module-level function).
PolicyFactory = Callable[[str, int], Policy]


@dataclass(frozen=True)
class Job:
    """One episode to run: a task of a world, with a seed."""

    task_id: str
    seed: int = 0
    world_id: str | None = None


@dataclass
class EpisodeRow:
    """What one episode gave, as a flat row."""

    task_id: str
    seed: int
    world_id: str | None
    actor: int
    record_id: str | None
    store: str
    reward: float
    terminated: bool
    truncated: bool
    steps: int


class SolutionPolicies:
    """A policy factory that plays each task's reference solution (from its
    world's task files), then submits: a baseline, and a way to check a
    cluster end to end. Picklable, so Ray can ship it to the actors."""

    def __init__(self, world_dirs: Sequence[str | os.PathLike[str]]):
        self.solutions: dict[str, list[Any]] = {}
        for d in world_dirs:
            tasks_dir = Path(d) / "tasks"
            for path in sorted(tasks_dir.glob("*.toml")):
                with open(path, "rb") as f:
                    for t in tomllib.load(f).get("tasks", []):
                        self.solutions[t["id"]] = [_action_of(step) for step in t.get("solution", [])]
            for path in sorted(tasks_dir.glob("*.jsonl")):
                with open(path, encoding="utf-8") as f:
                    for line in f:
                        if line.strip():
                            t = json.loads(line)
                            self.solutions[t["id"]] = [_action_of(step) for step in t.get("solution", [])]

    def __call__(self, task_id: str, seed: int) -> Policy:
        if task_id not in self.solutions:
            raise KeyError(f"no task {task_id!r} in the given worlds")
        return scripted_policy(self.solutions[task_id])


def _action_of(step: dict[str, Any]) -> dict[str, Any]:
    """A solution step without its rationale (`why`)."""
    return {k: v for k, v in step.items() if k != "why"}


class _ServerOnActor:
    """The body of a Ray actor: one HTTP server, one store."""

    def __init__(self, index: int, world_dirs: Sequence[str], store: str, binary: str | None, model: str):
        self.index = index
        self.store = store
        self.model = model
        self.server = HttpServer(world_dirs, store=store, binary=binary)
        self.url = self.server.url

    def run(self, jobs: list[Job], policy_for: PolicyFactory) -> list[dict[str, Any]]:
        rows = []
        for job in jobs:
            env = UnderstudyEnv(job.task_id, world=job.world_id, url=self.url, model=self.model)
            try:
                result = run_episode(env, policy_for(job.task_id, job.seed), seed=job.seed)
            finally:
                env.close()
            rows.append(
                asdict(
                    EpisodeRow(
                        task_id=job.task_id,
                        seed=job.seed,
                        world_id=job.world_id,
                        actor=self.index,
                        record_id=result.record_id,
                        store=self.store,
                        reward=result.total_reward,
                        terminated=result.terminated,
                        truncated=result.truncated,
                        steps=result.steps,
                    )
                )
            )
        return rows

    def stop(self) -> None:
        self.server.stop()


def run_on_ray(
    jobs: Sequence[Job],
    policy_for: PolicyFactory,
    *,
    world_dirs: Sequence[str | os.PathLike[str]],
    store_dir: str | os.PathLike[str],
    num_actors: int = 2,
    binary: str | os.PathLike[str] | None = None,
    model: str = "ray-agent",
) -> tuple[list[dict[str, Any]], float]:
    """Runs ``jobs`` on ``num_actors`` Ray actors (on the cluster
    ``ray.init`` connected to) and returns the rows, in job order, and the
    wall time in seconds the episodes took (actor start-up excluded)."""
    import ray

    if num_actors < 1:
        raise ValueError(f"num_actors must be at least 1, got {num_actors}")
    if not jobs:
        return [], 0.0
    Path(store_dir).mkdir(parents=True, exist_ok=True)
    dirs = [os.fspath(Path(d).resolve()) for d in world_dirs]
    bin_path = os.fspath(binary) if binary is not None else None
    Actor = ray.remote(num_cpus=0)(_ServerOnActor)
    actors = [
        Actor.remote(i, dirs, os.fspath(Path(store_dir).resolve() / f"actor-{i}.sqlite"), bin_path, model)
        for i in range(num_actors)
    ]
    try:
        # Wait for every server before timing the episodes.
        ray.get([a.__ray_ready__.remote() for a in actors])
        shares: list[list[tuple[int, Job]]] = [[] for _ in actors]
        for n, job in enumerate(jobs):
            shares[n % num_actors].append((n, job))
        started = time.monotonic()
        futures = [a.run.remote([j for _, j in share], policy_for) for a, share in zip(actors, shares) if share]
        results = ray.get(futures)
        elapsed = time.monotonic() - started
    finally:
        ray.get([a.stop.remote() for a in actors])
        for a in actors:
            ray.kill(a)
    rows: list[dict[str, Any] | None] = [None] * len(jobs)
    for share, share_rows in zip([s for s in shares if s], results):
        for (n, _), row in zip(share, share_rows):
            rows[n] = row
    return [r for r in rows if r is not None], elapsed
