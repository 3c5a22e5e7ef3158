"""An Inspect AI task for an Understudy world (``pip install
understudy-gym[inspect]``)::

    from inspect_ai import eval
    from understudy_gym.inspect_task import understudy

    eval(understudy(world="support-desk", task_ids=["duplicate-charge"]), model="openai/gpt-4o")

or ``inspect eval understudy_gym/inspect_task.py@understudy -T world=support-desk``.
A sample is a task of the world; its episode is recorded on the task's own
``understudy serve --http`` (one per Inspect task, stopped when the task
object is collected or Python exits). The solver :func:`understudy_agent`
opens the episode, gives the model what the server gives at reset (the
instruction and the world's policy as the system message, the customer's
opening message as the user message) and the world's tools as Inspect tools:
each call is a step of the episode. A turn of plain text is a message to the
customer, whose reply comes back as the next user message; ``submit`` (or a
tool that ends the task, or the step limit) ends it. The scorer
:func:`episode_reward` is the server's reward for the episode: the task's
rubric score, 0 when the episode did not end.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolParams

from .served_world import Episode, ServedWorld

__all__ = ["understudy", "understudy_agent", "episode_reward"]

#: Where a sample's episode results are kept in its store (JSON values).
STORE_KEY = "understudy"


@task
def understudy(
    world: str = "support-desk",
    task_ids: Sequence[str] | str | None = None,
    store: str | None = None,
    binary: str | None = None,
    seed: int = 0,
) -> Task:
    """The tasks ``task_ids`` of ``world`` (a world folder or id; default
    every task; a comma-separated string works from the command line's
    ``-T task_ids=a,b``), recorded into ``store`` (default: the server's, the
    desktop app's) with reset seed ``seed``. Unknown worlds or tasks raise
    ``ValueError``, a server that does not start
    :class:`~understudy_gym.ServerGone`."""
    if isinstance(task_ids, str):
        task_ids = [t.strip() for t in task_ids.split(",") if t.strip()]
    served = ServedWorld(world, task_ids, store=store, binary=binary)
    samples = [
        Sample(
            # Replaced by what the server gives when the episode opens.
            input=t["instruction"],
            id=t["task_id"],
            metadata={"world_id": served.world_id, "task_id": t["task_id"], "title": t["title"], "difficulty": t["difficulty"]},
        )
        for t in served.tasks
    ]
    return Task(
        dataset=samples,
        solver=understudy_agent(served, seed=seed),
        scorer=episode_reward(),
        name=f"understudy-{served.world_id}",
        metadata={"world_id": served.world_id, "world_dir": os.fspath(served.world_dir)},
    )


def _tools_for(episode: Episode, specs: list[dict[str, Any]]) -> list[Tool]:
    """The task's tools as Inspect tools, each call a step of ``episode``."""
    tools = []
    for spec in specs:
        f = spec["function"]

        def bind(name: str):
            async def execute(**kwargs: Any) -> str:
                result = await asyncio.to_thread(episode.tool_call, name, kwargs)
                return result.text

            return execute

        params = ToolParams.model_validate(f.get("parameters") or {"type": "object", "properties": {}})
        tools.append(ToolDef(bind(f["name"]), name=f["name"], description=f.get("description") or f["name"], parameters=params).as_tool())
    return tools


@solver
def understudy_agent(served: ServedWorld, seed: int = 0) -> Solver:
    """Runs one episode per sample: the model's turns until the episode
    ends (or Inspect's message, token or time limit stops the sample)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task_id = state.metadata["task_id"]
        model = str(state.model)
        episode = await asyncio.to_thread(served.open_episode, task_id, seed=seed, model=model)
        result = state.store.get(STORE_KEY) or {}
        result.update(episode_id=episode.episode_id, record_id=episode.record_id, reward=0.0, done=False, steps=0)
        try:
            state.messages = [ChatMessageSystem(content=episode.instructions), ChatMessageUser(content=episode.opening_message)]
            state.tools = _tools_for(episode, served.tools(task_id))
            # Every turn is at least one step and the server ends the
            # episode at max_steps; the bound only stops a model whose turns
            # the server cannot read at all (no step, so no limit reached).
            turns_left = 2 * int(served.task(task_id)["max_steps"]) + 2
            while not episode.done and not state.completed and turns_left > 0:
                turns_left -= 1
                state = await generate(state, tool_calls="single")
                last = state.output.message
                if not last.tool_calls and not episode.done and not state.completed:
                    reply = await asyncio.to_thread(episode.say, last.text)
                    state.messages.append(ChatMessageUser(content=reply.text or "(no reply)"))
        finally:
            result.update(reward=episode.reward, done=episode.done, steps=episode.steps, score=episode.info.get("score") if episode.done else None)
            state.store.set(STORE_KEY, result)
            await asyncio.to_thread(episode.close)
        return state

    return solve


@scorer(metrics=[mean()])
def episode_reward():
    """The Understudy server's reward for the sample's episode."""

    async def score(state: TaskState, target: Target) -> Score:
        result = state.store.get(STORE_KEY) or {}
        ended = bool(result.get("done"))
        return Score(
            value=float(result.get("reward", 0.0)),
            explanation="the task's rubric score" if ended else "the episode did not end, so it earned nothing",
            metadata={k: result.get(k) for k in ("episode_id", "record_id", "done", "steps", "score")},
        )

    return score
