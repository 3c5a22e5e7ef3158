"""Registers ``understudy/<world>-<task>`` with Gymnasium for every task of
every world folder found, by reading the world files directly (no server is
started until an environment is made)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import gymnasium as gym

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["register_worlds", "world_tasks", "default_world_dirs", "gym_id"]

ENTRY_POINT = "understudy_gym.env:UnderstudyEnv"


def gym_id(world_id: str, task_id: str) -> str:
    return f"understudy/{world_id}-{task_id}"


def world_tasks(world_dir: str | os.PathLike[str]) -> tuple[str, list[str]]:
    """The world's id and its task ids, in file order."""
    root = Path(world_dir)
    with open(root / "world.toml", "rb") as f:
        world_id = tomllib.load(f)["id"]
    tasks: list[str] = []
    tasks_dir = root / "tasks"
    for path in sorted(tasks_dir.glob("*.toml")) if tasks_dir.is_dir() else []:
        with open(path, "rb") as f:
            tasks += [t["id"] for t in tomllib.load(f).get("tasks", [])]
    for path in sorted(tasks_dir.glob("*.jsonl")) if tasks_dir.is_dir() else []:
        with open(path, encoding="utf-8") as f:
            tasks += [json.loads(line)["id"] for line in f if line.strip()]
    return world_id, tasks


def default_world_dirs() -> list[Path]:
    """World folders from $UNDERSTUDY_WORLDS_DIR (os.pathsep-separated), else
    the `fixtures/worlds` of the checkout this package lives in, else of the
    current folder."""
    roots: list[Path] = []
    env = os.environ.get("UNDERSTUDY_WORLDS_DIR")
    if env:
        roots += [Path(p) for p in env.split(os.pathsep) if p]
    else:
        here = Path(__file__).resolve()
        for parent in here.parents:
            if (parent / "Cargo.toml").is_file() and (parent / "fixtures" / "worlds").is_dir():
                roots.append(parent / "fixtures" / "worlds")
                break
        if not roots and (Path.cwd() / "fixtures" / "worlds").is_dir():
            roots.append(Path.cwd() / "fixtures" / "worlds")
    dirs: list[Path] = []
    for root in roots:
        if (root / "world.toml").is_file():
            dirs.append(root)
        elif root.is_dir():
            dirs += sorted(p for p in root.iterdir() if (p / "world.toml").is_file())
    return dirs


def register_worlds(*world_dirs: str | os.PathLike[str]) -> list[str]:
    """Registers every task of each world folder (default:
    :func:`default_world_dirs`) and returns the ids registered. Ids already
    registered are left as they are."""
    dirs = [Path(d) for d in world_dirs] if world_dirs else default_world_dirs()
    registered: list[str] = []
    for d in dirs:
        try:
            world_id, tasks = world_tasks(d)
        except (OSError, KeyError, ValueError) as e:
            if world_dirs:
                raise ValueError(f"{d} is not a readable world folder: {e}") from e
            continue
        for task in tasks:
            env_id = gym_id(world_id, task)
            if env_id in gym.registry:
                continue
            gym.register(
                id=env_id,
                entry_point=ENTRY_POINT,
                kwargs={"task": task, "world_dir": os.fspath(d.resolve()), "world": world_id},
                nondeterministic=False,
            )
            registered.append(env_id)
    return registered
