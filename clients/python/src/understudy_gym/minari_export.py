"""Stored episodes as a Minari dataset, without running them again.

Input is Understudy's native export (``understudy export --format native``,
one ``understudy.episode/1`` object per line): the steps exactly as the
performer saw them. Each episode becomes one Minari episode in the shape
the Gymnasium env (:class:`~understudy_gym.UnderstudyEnv`) produces, so a
policy trained offline on it acts in the live env unchanged:

- observations: the reset observation, then each kept step's observation
  text (cut like the env's, at ``OBSERVATION_MAX``);
- actions: each step's engine action as JSON text, plus the env's
  ``{"submit": true}`` (observation ``"Submitted."``) for a submitted
  episode, since submitting is how an episode ends in the env;
- rewards: 0 on every step but the last, which gets the episode's score when
  ``rewards`` gives one (see :func:`latest_scores`);
- terminations and truncations as recorded.

The reset observation is the one thing a stored episode does not hold; it
is asked of a server (``understudy serve --stdio`` on the episodes' worlds,
with a throwaway store): a reset is not a replay, and it is deterministic
for the task and seed.

Undone (retracted) steps are left out, as the training exports leave them
out; an episode with no step left is skipped, with a warning.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

from .client import StdioClient, UnderstudyError
from .env import ACTION_MAX, OBSERVATION_MAX, UnderstudyEnv, UnicodeText

__all__ = ["to_minari", "latest_scores", "NATIVE_FORMAT"]

#: The native export's line format this reader understands.
NATIVE_FORMAT = "understudy.episode/1"
#: The env's action that ends an episode, and what it observes.
SUBMIT = json.dumps({"submit": True})
SUBMITTED = "Submitted."
#: Statuses of an episode its performer submitted.
SUBMITTED_STATUSES = {"submitted", "approved", "rejected"}


def latest_scores(store: str | os.PathLike[str]) -> dict[str, float]:
    """Each scored episode's latest score (``understudy score --store``
    saves them), read from the store without changing it."""
    uri = Path(store).resolve().as_uri() + "?mode=ro"
    with sqlite3.connect(uri, uri=True) as db:
        rows = db.execute(
            "SELECT episode_id, value FROM scores WHERE value IS NOT NULL AND id IN "
            "(SELECT max(id) FROM scores GROUP BY episode_id)"
        ).fetchall()
    return {episode: float(value) for episode, value in rows}


def read_native(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The episodes of a native export file; a line that is not one names
    its line number and what was expected."""
    episodes = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as e:
                raise ValueError(f"{path}:{n}: not JSON ({e}); expected one {NATIVE_FORMAT} object per line") from None
            if not isinstance(record, dict) or record.get("format") != NATIVE_FORMAT:
                raise ValueError(f"{path}:{n}: expected an object with \"format\": \"{NATIVE_FORMAT}\" (understudy export --format native)")
            for key in ("episode", "steps"):
                if key not in record:
                    raise ValueError(f"{path}:{n}: missing `{key}`")
            episodes.append(record)
    return episodes


def to_minari(
    native: str | os.PathLike[str],
    dataset_id: str,
    *,
    world_dirs: Sequence[str | os.PathLike[str]],
    rewards: Mapping[str, float] | None = None,
    binary: str | os.PathLike[str] | None = None,
    author: str = "Understudy",
    author_email: str = "understudy@localhost",
    code_permalink: str = "https://github.com/understudy/understudy",
    description: str | None = None,
    data_format: str = "arrow",
) -> Any:
    """Builds the Minari dataset ``dataset_id`` (``namespace/name-v0``) from
    a native export file and returns it (a ``minari.MinariDataset``).

    ``world_dirs`` are the episodes' world folders (for the reset
    observations); ``rewards`` maps episode ids to their score. Needs
    ``minari`` (``pip install minari``)."""
    import minari
    from minari.data_collector import EpisodeBuffer

    episodes = read_native(native)
    if not episodes:
        raise ValueError(f"{native}: no episodes to put in a dataset")
    rewards = rewards or {}
    buffers = []
    skipped = []
    with tempfile.TemporaryDirectory(prefix="understudy-minari-") as tmp:
        server = StdioClient(world_dirs, binary=binary, store=Path(tmp) / "resets.sqlite", durability="fast")
        try:
            for record in episodes:
                buffer = _episode_buffer(server, record, len(buffers), rewards, EpisodeBuffer)
                if buffer is None:
                    skipped.append(record["episode"]["id"])
                else:
                    buffers.append(buffer)
        finally:
            server.close()
    if skipped:
        warnings.warn(f"left out {len(skipped)} episode(s) with no step to learn from: {', '.join(skipped[:5])}", stacklevel=2)
    if not buffers:
        raise ValueError(f"{native}: every episode is empty, so there is nothing to put in a dataset")
    return minari.create_dataset_from_buffers(
        dataset_id,
        buffers,
        observation_space=UnicodeText(OBSERVATION_MAX),
        action_space=UnicodeText(ACTION_MAX),
        algorithm_name="expert demonstrations (Understudy)",
        author=author,
        author_email=author_email,
        code_permalink=code_permalink,
        description=description or f"{len(buffers)} episodes exported from Understudy ({Path(native).name})",
        data_format=data_format,
    )


def _episode_buffer(server: StdioClient, record: dict[str, Any], index: int, rewards: Mapping[str, float], EpisodeBuffer: Any) -> Any:
    header = record["episode"]
    steps = [s for s in record["steps"] if not s.get("retracted")]
    if not steps:
        return None
    observations = [_reset_observation(server, header)]
    actions: list[str] = []
    terminations: list[bool] = []
    truncations: list[bool] = []
    for s in steps:
        observations.append(UnderstudyEnv._text(s["observation"]))
        actions.append(json.dumps(s["action"], ensure_ascii=False))
        terminations.append(bool(s.get("terminated")))
        truncations.append(bool(s.get("truncated")))
    if header.get("status") in SUBMITTED_STATUSES and not (terminations[-1] or truncations[-1]):
        observations.append(SUBMITTED)
        actions.append(SUBMIT)
        terminations.append(True)
        truncations.append(False)
    step_rewards = [0.0] * len(actions)
    step_rewards[-1] = float(rewards.get(header["id"], 0.0))
    return EpisodeBuffer(
        id=index,
        seed=int(header.get("seed", 0)),
        observations=observations,
        actions=actions,
        rewards=step_rewards,
        terminations=terminations,
        truncations=truncations,
    )


def _reset_observation(server: StdioClient, header: dict[str, Any]) -> str:
    fields = {"task_id": header["task_id"], "world_id": header["world_id"], "seed": int(header.get("seed", 0)), "model": "minari-export"}
    try:
        out = server.call("reset", **fields)
    except UnderstudyError as e:
        raise ValueError(f"episode {header['id']}: cannot reset {header['world_id']}/{header['task_id']} for its first observation: {e}") from None
    server.call("close", episode_id=out["episode_id"])
    return UnderstudyEnv._text(out["observation"])

