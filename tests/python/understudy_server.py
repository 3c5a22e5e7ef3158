"""What the tests in tests/python share: the `understudy` binary under test,
a real `understudy serve --http` on loopback, the bundled worlds' gold
solutions, and the episodes a store holds."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = REPO / "fixtures" / "worlds" / "support-desk"
MINI = REPO / "tests" / "worlds" / "mini"


def binary() -> str:
    """$UNDERSTUDY_BIN, else the checkout's target/debug build."""
    given = os.environ.get("UNDERSTUDY_BIN")
    path = Path(given) if given else REPO / "target" / "debug" / "understudy"
    assert path.exists(), f"no understudy binary at {path}; build it (cargo build -p understudy-cli) or set UNDERSTUDY_BIN"
    return str(path)


def solution(world: Path, task: str) -> list[dict]:
    """The task's gold solution, as actions."""
    for path in sorted((world / "tasks").glob("*.toml")):
        for t in tomllib.loads(path.read_text())["tasks"]:
            if t["id"] == task:
                return t["solution"]
    raise KeyError(task)


def stored(store: Path) -> list[tuple]:
    """(id, model, status, task, steps) of every episode, oldest first."""
    if not store.exists():
        return []
    with sqlite3.connect(store) as db:
        return db.execute(
            "SELECT e.id, e.actor_id, e.status, e.task_id, count(s.idx) FROM episodes e LEFT JOIN steps s ON s.episode_id = e.id GROUP BY e.id ORDER BY e.created_at"
        ).fetchall()


@contextlib.contextmanager
def http_server(store: Path, *worlds: Path):
    """`understudy serve --http` on 127.0.0.1 (port chosen by the OS) over
    `store`, serving `worlds`; yields its base URL. The client package's
    HttpServer (scripts/python.sh installs it before these tests run)."""
    from understudy_gym import HttpServer

    with HttpServer(worlds, store=store, binary=binary()) as server:
        yield server.url