"""The Gymnasium environment: one task of one world, served by `understudy
serve` (a child process over stdio, or a server at a URL).

Observations and actions are text. An observation is the engine's rendering
for a language model (``observation.text``); the structured result is in
``info["observation"]``. An action is the JSON text of an engine action:
``{"tool": name, "args": {...}}``, ``{"message": text}``, an OpenAI tool call
``{"name": .., "arguments": ..}``, or ``{"submit": true}`` to finish. A dict
is accepted too.
"""

from __future__ import annotations

import collections.abc
import json
import multiprocessing
import os
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils.shared_memory import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

from .client import HttpClient, StdioClient, UnderstudyError

__all__ = ["UnderstudyEnv", "UnicodeText", "OBSERVATION_MAX", "ACTION_MAX"]

#: Longest observation text; longer ones are cut with a marker. An async
#: vector env keeps one such buffer per env in shared memory (4 bytes a
#: character), so this is 512 KiB per env, not megabytes; 131,072
#: characters is some 30,000 tokens, more than a model would read.
OBSERVATION_MAX = 1 << 17
#: Longest action text.
ACTION_MAX = 100_000


class UnicodeText(spaces.Text):
    """A :class:`gymnasium.spaces.Text` holding any Unicode text.

    ``Text`` only contains strings drawn from its character set, and customer
    messages hold em dashes, curly quotes and accents; listing every Unicode
    character would cost megabytes. So membership checks the length only, and
    sampling draws from the printable ASCII set, which is enough for random
    exploration and for ``check_env``."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None):
        printable = "".join(chr(c) for c in range(32, 127))
        super().__init__(max_length, min_length=min_length, charset=printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )


# An async vector env passes observations through shared memory, which for
# `Text` holds each character's index in the charset: a character outside it
# (an em dash) fails. And the env reads that memory once, when it starts,
# into a tuple of strings that never changes again: Gymnasium's `Text`
# observations from shared memory are always the first, empty ones.
# UnicodeText stores code points instead (-1 after the end), and reading
# gives a live view that decodes the current texts whenever it is used.
@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(space: UnicodeText, n: int = 1, ctx: Any = multiprocessing) -> Any:
    memory = ctx.Array(np.dtype(np.int32).char, n * space.max_length)
    np.frombuffer(memory.get_obj(), dtype=np.int32).fill(-1)
    return memory


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length
    codes = np.full(size, -1, dtype=np.int32)
    text = value[:size]
    if text:
        codes[: len(text)] = np.frombuffer(text.encode("utf-32-le"), dtype=np.int32)
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    np.copyto(destination[index * size : (index + 1) * size], codes)


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> "SharedTexts":
    return SharedTexts(np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length)))


class SharedTexts(collections.abc.Sequence):
    """The texts in an async vector env's shared memory, decoded each time
    they are read; a copy (what the env returns by default) is a plain
    tuple of the texts at that moment."""

    def __init__(self, codes: np.ndarray):
        self._codes = codes

    def __len__(self) -> int:
        return len(self._codes)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return tuple(self._text(i) for i in range(*index.indices(len(self))))
        return self._text(range(len(self))[index])

    def _text(self, i: int) -> str:
        row = self._codes[i]
        end = np.flatnonzero(row < 0)
        length = int(end[0]) if end.size else len(row)
        return row[:length].astype("<i4").tobytes().decode("utf-32-le")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, collections.abc.Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"

    def __copy__(self) -> tuple[str, ...]:
        return tuple(self)

    def __deepcopy__(self, memo: dict) -> tuple[str, ...]:
        return tuple(self)


class UnderstudyEnv(gym.Env[str, str]):
    """One Understudy task as a Gymnasium environment.

    Every episode is recorded by the server as an agent trajectory (actor
    ``agent``, the given ``model``) in its store, so it can be scored,
    reviewed and graded like an expert's.

    Args:
        task: the task id.
        world_dir: the world folder (needed to start a server over stdio).
        world: the world id (needed only when a URL server serves several
            worlds sharing the task id).
        url: an `understudy serve --http` server to use instead of starting one.
        token: that server's bearer token (`serve --token`; default
            $UNDERSTUDY_TOKEN).
        busy_timeout: with ``url``, how long ``reset`` waits, retrying with
            back-off, while the server holds as many episodes as it may
            (HTTP 429), before raising; default 120 seconds.
        binary: the `understudy` executable (default: $UNDERSTUDY_BIN or PATH).
        store: the trajectory store file for a server started here
            (default: the server's, in the user data folder).
        model: the model name recorded with every episode.
        durability: ``"full"`` (default) or ``"fast"`` for a server started here.
        user_sim: a user-simulator command for a server started here.
        server_args: more `understudy serve` flags.
        invalid_action: ``"observe"`` (default) turns an action the server
            cannot parse (not JSON, wrong shape) into an error observation
            with reward 0 that counts toward the step limit; ``"raise"``
            raises :class:`UnderstudyError` instead.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        task: str,
        world_dir: str | os.PathLike[str] | None = None,
        world: str | None = None,
        *,
        url: str | None = None,
        token: str | None = None,
        busy_timeout: float = 120.0,
        binary: str | os.PathLike[str] | None = None,
        store: str | os.PathLike[str] | None = None,
        model: str = "unknown",
        durability: str | None = None,
        user_sim: str | None = None,
        server_args: Sequence[str] = (),
        invalid_action: str = "observe",
    ):
        if invalid_action not in ("observe", "raise"):
            raise ValueError(f"invalid_action must be 'observe' or 'raise', not {invalid_action!r}")
        self.task_id = task
        self.world_id = world
        self.model = model
        self._invalid_action = invalid_action
        self.observation_space = UnicodeText(OBSERVATION_MAX)
        self.action_space = UnicodeText(ACTION_MAX)
        if url is not None:
            self._client: StdioClient | HttpClient = HttpClient(url, token=token, busy_timeout=busy_timeout)
        else:
            if world_dir is None:
                raise ValueError("give world_dir (the world folder) to start a server, or url to use a running one")
            self._client = StdioClient(
                [world_dir],
                binary=binary,
                store=store,
                durability=durability,
                user_sim=user_sim,
                extra_args=server_args,
            )
        self._closed = False
        self.episode_id: str | None = None
        #: The trajectory's id in the store.
        self.record_id: str | None = None
        self._open = False
        self._steps = 0
        self._invalid_steps = 0
        self._max_steps = 0
        self._tools: list[dict[str, Any]] | None = None

    # -- Gymnasium API --------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"episode_id", "model"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; expected episode_id, model")
        self._close_episode()
        # The server's seed drives the world's random(); without one, draw
        # it from the env's generator so seeded runs repeat.
        server_seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        fields: dict[str, Any] = {
            "task_id": self.task_id,
            "seed": server_seed,
            "model": options.get("model", self.model),
        }
        if self.world_id is not None:
            fields["world_id"] = self.world_id
        if "episode_id" in options:
            fields["episode_id"] = options["episode_id"]
        out = self._client.call("reset", **fields)
        self.episode_id = out["episode_id"]
        self.record_id = out["record_id"]
        self.world_id = self.world_id or out["info"].get("world_id")
        self._open = True
        self._steps = 0
        self._invalid_steps = 0
        self._max_steps = int(out["info"].get("max_steps", 0))
        obs = self._text(out["observation"])
        return obs, self._info(out)

    def step(self, action: str | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if not self._open or self.episode_id is None:
            raise RuntimeError("call reset() before step(), and again after the episode ends")
        try:
            parsed = json.loads(action) if isinstance(action, str) else action
            out = self._client.call("step", episode_id=self.episode_id, action=parsed)
        except json.JSONDecodeError as e:
            return self._invalid("invalid_action", f"the action is not JSON: {e}")
        except UnderstudyError as e:
            if e.code == "invalid_action":
                return self._invalid(e.code, e.message)
            raise
        self._steps = int(out["info"].get("steps", self._steps))
        terminated = bool(out["terminated"])
        truncated = bool(out["truncated"])
        if terminated or truncated:
            self._open = False
        obs = self._text(out["observation"])
        return obs, float(out["reward"]), terminated, truncated, self._info(out)

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._close_episode()
        finally:
            self._closed = True
            self._client.close()

    # -- helpers ----------------------------------------------------------

    def tools_as_openai_functions(self) -> list[dict[str, Any]]:
        """The task's tools as OpenAI function specs (``{"type": "function",
        "function": {name, description, parameters}}``), including the
        ``submit`` pseudo-tool that ends the episode."""
        if self._tools is None:
            fields: dict[str, Any] = {"task_id": self.task_id}
            if self.world_id is not None:
                fields["world_id"] = self.world_id
            self._tools = self._client.call("schema", **fields)["tools"]
        return json.loads(json.dumps(self._tools))

    def state(self) -> dict[str, Any]:
        """The server's view of the current episode (`GET /state`)."""
        if self.episode_id is None:
            raise RuntimeError("no episode yet: call reset()")
        return self._client.call("state", episode_id=self.episode_id)

    def _close_episode(self) -> None:
        """Closes the current episode on the server; one still running is
        recorded as abandoned, every step kept."""
        if self.episode_id is None:
            return
        try:
            self._client.call("close", episode_id=self.episode_id)
        except UnderstudyError as e:
            if e.code != "unknown_episode":
                raise
        self._open = False

    def _invalid(self, code: str, message: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._invalid_action == "raise":
            raise UnderstudyError(code, message, 400)
        # Not a server step, but it must count toward the limit or a policy
        # stuck on bad output would never end.
        self._invalid_steps += 1
        steps = self._steps + self._invalid_steps
        truncated = self._max_steps > 0 and steps >= self._max_steps
        if truncated:
            self._close_episode()
        obs = f"Error: {message}"
        info = {"error": {"code": code, "message": message}, "steps": steps, "invalid_steps": self._invalid_steps}
        return obs, 0.0, False, truncated, info

    @staticmethod
    def _text(observation: dict[str, Any]) -> str:
        text = str(observation.get("text", ""))
        if len(text) > OBSERVATION_MAX:
            marker = "\n[... cut: the observation is longer than the observation space allows]"
            text = text[: OBSERVATION_MAX - len(marker)] + marker
        return text

    @staticmethod
    def _info(out: dict[str, Any]) -> dict[str, Any]:
        # Only deterministic fields: seeded runs must give equal infos.
        info = dict(out["info"])
        info["observation"] = out["observation"]
        return info
