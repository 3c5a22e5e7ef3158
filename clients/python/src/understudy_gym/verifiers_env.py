"""A verifiers environment for an Understudy world (``pip install
understudy-gym[verifiers]``, verifiers 0.3.1's classic stack)::

    env = load_environment(world="support-desk", task_ids=["duplicate-charge"])
    results = await env.evaluate(client=OpenAIChatCompletionsClient(AsyncOpenAI(...)), model="my-model")

Each rollout is one Understudy episode on the environment's own
``understudy serve --http``. The prompt is what the server gives at reset: a
system message with the task's instruction and the world's policy, and the
customer's opening message. The world's tools are the model's tools; a turn
with tool calls runs each as a step, a turn of plain text is a message to the
customer (their reply is the next user message), and ``submit`` ends the
episode. The rubric's one reward function is the server's episode reward:
the task's rubric score, 0 when the rollout ended without the episode ending.

verifiers 0.4 replaced this stack with ``verifiers.v1``, whose harnesses run
the model in a separate program (fetched with ``uv`` at run time) and its
tools as MCP servers; Understudy's MCP endpoint (``/mcp``) is the way in
there.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Sequence

import verifiers as vf
from datasets import Dataset
from verifiers.types import Messages, State, ToolMessage, UserMessage
from verifiers.utils.message_utils import normalize_messages

from .client import UnderstudyError
from .served_world import Episode, ServedWorld

__all__ = ["load_environment", "UnderstudyVerifiersEnv", "episode_reward"]


async def episode_reward(state: State) -> float:
    """The Understudy server's reward for the rollout's episode: the task's
    rubric score when the episode ended, else 0."""
    understudy = state.get("understudy") or {}
    return float(understudy.get("reward", 0.0))


class UnderstudyVerifiersEnv(vf.MultiTurnEnv):
    """A ``vf.MultiTurnEnv`` whose turns are steps of an Understudy episode
    (see the module's doc). Made by :func:`load_environment`."""

    def __init__(self, served: ServedWorld, *, seed: int = 0, max_turns: int | None = None, **kwargs: Any):
        self.served = served
        rows = []
        for t in served.tasks:
            tool_defs = [_tool_def(spec) for spec in served.tools(t["task_id"])]
            rows.append(
                {
                    # Replaced at reset by what the server gives (the opening
                    # message and the policy come with the episode).
                    "prompt": [{"role": "system", "content": t["instruction"]}],
                    # JSON text: the tools' schemas differ, which one Arrow
                    # column cannot hold; verifiers parses it back.
                    "info": json.dumps({"world_id": served.world_id, "task_id": t["task_id"], "seed": seed, "tool_defs": tool_defs}),
                }
            )
        # Every turn is at least one step and the server ends the episode at
        # the task's max_steps; the bound here only stops a model whose
        # turns the server cannot read at all.
        bound = max_turns if max_turns is not None else 2 * max(t["max_steps"] for t in served.tasks) + 2
        super().__init__(
            eval_dataset=Dataset.from_list(rows),
            rubric=vf.Rubric(funcs=[episode_reward], weights=[1.0]),
            max_turns=bound,
            env_id=f"understudy-{served.world_id}",
            **kwargs,
        )
        self._episodes: dict[str, Episode] = {}

    async def setup_state(self, state: State) -> State:
        info = state["info"]
        try:
            episode = await asyncio.to_thread(
                self.served.open_episode, info["task_id"], seed=int(info.get("seed", 0)), model=str(state["model"])
            )
        except UnderstudyError as e:
            raise vf.InfraError(f"understudy reset of task {info['task_id']!r} failed: {e}") from e
        self._episodes[state["trajectory_id"]] = episode
        state["understudy"] = {
            "episode_id": episode.episode_id,
            "record_id": episode.record_id,
            "reward": 0.0,
            "done": False,
            "steps": 0,
        }
        state["prompt"] = normalize_messages(
            [{"role": "system", "content": episode.instructions}, {"role": "user", "content": episode.opening_message}],
            field_name="understudy prompt",
        )
        return state

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        episode = self._episodes[state["trajectory_id"]]
        last = messages[-1]
        calls = getattr(last, "tool_calls", None) or []
        out: list[Any] = []
        try:
            if calls:
                for call in calls:
                    if episode.done:
                        out.append(ToolMessage(role="tool", content="Not run: the episode is over.", tool_call_id=call.id))
                        continue
                    r = await asyncio.to_thread(episode.tool_call, call.name, call.arguments)
                    out.append(ToolMessage(role="tool", content=r.text, tool_call_id=call.id))
            else:
                r = await asyncio.to_thread(episode.say, _text_of(getattr(last, "content", "")))
                out.append(UserMessage(role="user", content=r.text or "(no reply)"))
        except UnderstudyError as e:
            raise vf.InfraError(f"understudy step of episode {episode.episode_id} failed: {e}") from e
        state["understudy"].update(reward=episode.reward, done=episode.done, steps=episode.steps)
        if episode.done:
            state["understudy"]["score"] = episode.info.get("score")
            state["final_env_response"] = out
        return out

    @vf.cleanup
    async def close_episode(self, state: State) -> None:
        """Closes the rollout's episode: one still running (the model
        stopped, or an error) is recorded as abandoned."""
        episode = self._episodes.pop(state.get("trajectory_id", ""), None)
        if episode is not None:
            await asyncio.to_thread(episode.close)

    @vf.teardown
    async def stop_server(self) -> None:
        self.served.close()


def _tool_def(spec: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function spec as verifiers' provider-neutral tool."""
    f = spec["function"]
    return {"name": f["name"], "description": f.get("description", ""), "parameters": f.get("parameters") or {"type": "object", "properties": {}}}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(getattr(p, "text", "")) for p in content)
    return "" if content is None else str(content)


def load_environment(
    world: str | os.PathLike[str] = "support-desk",
    task_ids: Sequence[str] | None = None,
    *,
    store: str | os.PathLike[str] | None = None,
    binary: str | os.PathLike[str] | None = None,
    seed: int = 0,
    max_turns: int | None = None,
    server_args: Sequence[str] = (),
    **kwargs: Any,
) -> UnderstudyVerifiersEnv:
    """The verifiers entry point: an environment whose eval dataset is
    ``task_ids`` of ``world`` (a world folder or id; default every task),
    served by one ``understudy serve --http`` recording into ``store``.
    ``seed`` is each episode's reset seed; other keyword arguments go to
    ``vf.MultiTurnEnv``. Unknown worlds or tasks raise ``ValueError``, a
    server that does not start :class:`~understudy_gym.ServerGone`."""
    served = ServedWorld(world, task_ids, store=store, binary=binary, server_args=server_args)
    try:
        return UnderstudyVerifiersEnv(served, seed=seed, max_turns=max_turns, **kwargs)
    except BaseException:
        served.close()
        raise
