"""One world served for the agent frameworks whose rollouts are chat
conversations with tool calls (verifiers, Inspect AI).

A :class:`ServedWorld` starts one ``understudy serve --http`` for the world,
checks the task ids asked for against the tasks the server serves, and opens
:class:`Episode` objects: each is one recorded Understudy episode, driven by
a model's turns. A tool call becomes a step of that tool, plain text becomes a
message to the customer (their reply comes back), and ``submit`` (or a tool
that ends the task, or the step limit) ends it with the rubric's reward. The
frameworks' adapters (:mod:`understudy_gym.verifiers_env`,
:mod:`understudy_gym.inspect_task`) only translate their message types.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .client import HttpClient, HttpServer, UnderstudyError
from .registration import default_world_dirs, world_tasks

__all__ = ["ServedWorld", "Episode", "StepResult", "resolve_world"]


def resolve_world(world: str | os.PathLike[str]) -> Path:
    """A world folder: ``world`` itself when it is one (it has a
    ``world.toml``), else the folder of the world with that id among
    :func:`~understudy_gym.default_world_dirs` ($UNDERSTUDY_WORLDS_DIR, else
    the checkout's ``fixtures/worlds``)."""
    path = Path(world)
    if (path / "world.toml").is_file():
        return path.resolve()
    known: dict[str, Path] = {}
    for d in default_world_dirs():
        try:
            world_id, _ = world_tasks(d)
        except (OSError, KeyError, ValueError):
            continue
        known.setdefault(world_id, d)
    if os.fspath(world) in known:
        return known[os.fspath(world)].resolve()
    listed = ", ".join(sorted(known)) or "none found"
    raise ValueError(
        f"unknown world {os.fspath(world)!r}: it is not a world folder (no world.toml there) "
        f"and no world has that id (known worlds: {listed}; set UNDERSTUDY_WORLDS_DIR to look elsewhere)"
    )


@dataclass
class StepResult:
    """What one model action did: the text the model reads next, and
    whether the episode ended (then ``reward`` is the rubric's score)."""

    text: str
    done: bool
    reward: float
    info: dict[str, Any] = field(default_factory=dict)


class Episode:
    """One Understudy episode, opened by :meth:`ServedWorld.open_episode`.
    Its own HTTP connection, so episodes run side by side; the calls block,
    so async frameworks run them in a thread. ``close()`` always: an episode
    still running is recorded as abandoned, every step kept."""

    def __init__(self, world: "ServedWorld", task_id: str, *, seed: int, model: str):
        self.task_id = task_id
        self._client = HttpClient(world.url, token=world.token)
        try:
            reset = self._client.call("reset", task_id=task_id, world_id=world.world_id, seed=seed, model=model)
        except BaseException:
            self._client.close()
            raise
        self.episode_id: str = reset["episode_id"]
        self.record_id: str = reset["record_id"]
        content = reset["observation"].get("content") or {}
        info = reset["info"]
        #: The customer's opening message, as the server gives it.
        self.opening_message: str = reset["observation"]["text"]
        #: The brief the model works from: the task's instruction, which task
        #: it is, how to act, and the world's policy (what MCP clients get as
        #: the session's instructions).
        self.instructions: str = _instructions(
            instruction=content.get("instruction", ""),
            task_id=task_id,
            world_name=world.world_name,
            title=info.get("title", ""),
            policy=info.get("policy", ""),
        )
        self.done = False
        self.reward = 0.0
        self.steps = 0
        self.info: dict[str, Any] = info
        self._closed = False

    def tool_call(self, name: str, arguments: str | dict[str, Any] | None) -> StepResult:
        """The model called tool ``name`` (``submit`` ends the episode).
        ``arguments`` as the model wrote them: JSON text or an object."""
        if arguments is None or arguments == "":
            arguments = {}
        return self._step({"name": name, "arguments": arguments})

    def say(self, text: str) -> StepResult:
        """The model wrote to the customer; the result is their reply."""
        return self._step({"message": text})

    def submit(self) -> StepResult:
        return self._step({"submit": True})

    def _step(self, action: dict[str, Any]) -> StepResult:
        if self.done:
            return StepResult("The episode is over; nothing was done.", True, self.reward, self.info)
        try:
            r = self._client.call("step", episode_id=self.episode_id, action=action)
        except UnderstudyError as e:
            if e.code != "invalid_action":
                raise
            # A call the server cannot even read (arguments that are not
            # JSON, say) is no step: the model is told, and may retry.
            return StepResult(f"Error: {e.message}", False, 0.0, {"error": {"code": e.code, "message": e.message}})
        self.steps = r["info"].get("steps", self.steps)
        self.info = r["info"]
        text = r["observation"].get("text", "")
        if r["done"]:
            self.done = True
            self.reward = float(r["reward"])
            text = f"{text}\n\n[The episode is over. Reward: {self.reward}]".strip()
        return StepResult(text, self.done, float(r["reward"]), r["info"])

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._client.call("close", episode_id=self.episode_id)
        except UnderstudyError as e:
            # Already closed (idle timeout) or the server is gone: nothing
            # left to record.
            if e.code not in ("unknown_episode", "server_gone"):
                raise
        finally:
            self._client.close()


def _instructions(*, instruction: str, task_id: str, world_name: str, title: str, policy: str) -> str:
    text = (
        f"{instruction}\n\nTask `{task_id}` in {world_name}: {title}\n\n"
        "Use the tools to work. Write plain text (no tool call) to talk to the customer: "
        "their reply comes back. Call `submit` when you are done: it ends the episode."
    )
    if policy.strip():
        text += "\n\nPolicy:\n" + policy.strip()
    return text


class ServedWorld:
    """``understudy serve --http`` on loopback for one world (a folder, or a
    world id found by :func:`resolve_world`) and the tasks chosen from it.

    ``task_ids``: the tasks to run, in that order (default: every task the
    world has); an id the world does not have is a ``ValueError`` listing the
    ones it has. ``store``: the trajectory store the episodes are recorded in
    (default: the server's, the desktop app's). ``binary``: the ``understudy``
    executable (default: :func:`~understudy_gym.find_binary`). A server that
    does not start raises :class:`~understudy_gym.ServerGone` with its error.
    ``close()`` stops the server; it is also stopped when this object is
    garbage collected or the interpreter exits."""

    def __init__(
        self,
        world: str | os.PathLike[str],
        task_ids: Sequence[str] | None = None,
        *,
        store: str | os.PathLike[str] | None = None,
        binary: str | os.PathLike[str] | None = None,
        server_args: Sequence[str] = (),
        token: str | None = None,
    ):
        if isinstance(task_ids, str):
            raise TypeError(f"task_ids must be a list of task ids, not the string {task_ids!r}")
        self.world_dir = resolve_world(world)
        self.token = token
        env = None
        if token is not None:
            env = {**os.environ, "UNDERSTUDY_TOKEN": token}
        self._server = HttpServer([self.world_dir], store=store, binary=binary, extra_args=server_args, env=env)
        self._finalizer = weakref.finalize(self, self._server.stop)
        self.url = self._server.url
        try:
            listing = self._call("tasks")
            (served,) = listing["worlds"]
            self.world_id: str = served["world_id"]
            self.world_name: str = served.get("name") or self.world_id
            by_id = {t["task_id"]: t for t in listing["tasks"]}
            chosen = list(by_id) if task_ids is None else list(task_ids)
            missing = [t for t in chosen if t not in by_id]
            if missing:
                raise ValueError(
                    f"world {self.world_id!r} ({self.world_dir}) has no task "
                    + ", ".join(repr(t) for t in missing)
                    + f"; its tasks: {', '.join(by_id)}"
                )
            if not chosen:
                raise ValueError(f"no tasks chosen from world {self.world_id!r}: task_ids is empty")
            #: The chosen tasks as `GET /tasks` lists them (title,
            #: instruction, max_steps, tools; never the answer key).
            self.tasks: list[dict[str, Any]] = [by_id[t] for t in chosen]
            self._tools: dict[str, list[dict[str, Any]]] = {}
            self._lock = threading.Lock()
        except BaseException:
            self.close()
            raise

    def tools(self, task_id: str) -> list[dict[str, Any]]:
        """The task's tools as OpenAI function specs (``{"type": "function",
        "function": {name, description, parameters}}``), ``submit`` last."""
        with self._lock:
            if task_id not in self._tools:
                schema = self._call("schema", world_id=self.world_id, task_id=task_id)
                self._tools[task_id] = schema["tools"]
            return json.loads(json.dumps(self._tools[task_id]))

    def _call(self, op: str, **fields: Any) -> dict[str, Any]:
        client = HttpClient(self.url, token=self.token)
        try:
            return client.call(op, **fields)
        finally:
            client.close()

    def task(self, task_id: str) -> dict[str, Any]:
        for t in self.tasks:
            if t["task_id"] == task_id:
                return t
        raise ValueError(f"task {task_id!r} is not among the chosen tasks: {', '.join(t['task_id'] for t in self.tasks)}")

    def open_episode(self, task_id: str, *, seed: int = 0, model: str = "unknown") -> Episode:
        """Starts one recorded episode of ``task_id`` on the server."""
        return Episode(self, task_id, seed=seed, model=model)

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> "ServedWorld":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
