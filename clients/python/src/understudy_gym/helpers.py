"""Helpers for driving an environment with a policy."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym

__all__ = ["EpisodeResult", "run_episode", "tools_as_openai_functions"]

Policy = Callable[[str, dict[str, Any]], "str | dict[str, Any]"]


@dataclass
class EpisodeResult:
    """What one episode gave."""

    #: The sum of rewards: the rubric's score, as intermediate steps give 0.
    total_reward: float
    #: The reward of the last step.
    final_reward: float
    terminated: bool
    truncated: bool
    steps: int
    #: The handle the server used and the trajectory's id in its store.
    episode_id: str | None
    record_id: str | None
    #: The last step's info; ``score`` holds the rubric's details when one
    #: scored the episode.
    info: dict[str, Any]
    #: (action, observation text, reward) for every step.
    transcript: list[tuple[Any, str, float]] = field(default_factory=list)

    @property
    def score(self) -> dict[str, Any] | None:
        return self.info.get("score")


def run_episode(
    env: gym.Env | str,
    policy: Policy,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int = 1000,
    **make_kwargs: Any,
) -> EpisodeResult:
    """Runs one episode: ``policy(observation, info)`` returns each action
    (JSON text or a dict) until the episode terminates or is truncated.
    ``env`` may be a Gymnasium id, made with ``make_kwargs`` and closed
    afterwards."""
    owned = isinstance(env, str)
    e = gym.make(env, **make_kwargs) if isinstance(env, str) else env
    try:
        obs, info = e.reset(seed=seed, options=options)
        total = 0.0
        reward = 0.0
        terminated = truncated = False
        transcript: list[tuple[Any, str, float]] = []
        steps = 0
        while not (terminated or truncated) and steps < max_steps:
            action = policy(obs, info)
            obs, reward, terminated, truncated, info = e.step(action)
            total += float(reward)
            steps += 1
            transcript.append((action, obs, float(reward)))
        u = e.unwrapped
        return EpisodeResult(
            total_reward=total,
            final_reward=float(reward),
            terminated=bool(terminated),
            truncated=bool(truncated),
            steps=steps,
            episode_id=getattr(u, "episode_id", None),
            record_id=getattr(u, "record_id", None),
            info=info,
            transcript=transcript,
        )
    finally:
        if owned:
            e.close()


def tools_as_openai_functions(env: gym.Env) -> list[dict[str, Any]]:
    """The task's tools as OpenAI function specs; see
    :meth:`UnderstudyEnv.tools_as_openai_functions`."""
    return env.unwrapped.tools_as_openai_functions()  # type: ignore[attr-defined]


def scripted_policy(actions: list[Any]) -> Policy:
    """A policy that plays ``actions`` in order, then submits."""
    queue = [a if isinstance(a, str) else json.dumps(a) for a in actions]

    def policy(_obs: str, _info: dict[str, Any]) -> str:
        return queue.pop(0) if queue else json.dumps({"submit": True})

    return policy


__all__.append("scripted_policy")
