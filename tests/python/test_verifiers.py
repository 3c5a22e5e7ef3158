"""verifiers' own rollout machinery runs Understudy's verifiers environment.

`understudy_gym.verifiers_env.load_environment` (verifiers pinned in
scripts/python.sh, in its own venv: it pins an older `mcp` than the MCP test)
serves a world with the real `understudy` binary; `env.evaluate` runs each
rollout through verifiers' `OpenAIChatCompletionsClient` and the `openai`
SDK against a scripted OpenAI-compatible server on loopback
(scripted_openai.py) that replays a task's gold solution as tool calls and
messages. No model weights, no network.
"""

from __future__ import annotations

import asyncio

import pytest
import verifiers as vf
from openai import AsyncOpenAI

from understudy_gym import HttpClient, HttpServer, ServerGone
from understudy_gym.verifiers_env import load_environment

from scripted_openai import ScriptedOpenAI, turn_of
from understudy_server import SUPPORT_DESK, binary, solution, stored

# Rubrics without judged criteria: the gold solution earns exactly 1.
GOLD = ["duplicate-charge", "renewal-question"]


def evaluate(env, fake: ScriptedOpenAI, model: str):
    client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=fake.base_url, api_key="scripted", max_retries=0))
    return asyncio.run(env.evaluate(client=client, model=model, max_concurrent=2, on_progress=lambda *_a, **_k: None))


def do_nothing_reward(task: str, store) -> float:
    """What submitting at once earns, straight from the server."""
    with HttpServer([SUPPORT_DESK], store=store, binary=binary()) as server:
        c = HttpClient(server.url)
        episode = c.call("reset", task_id=task, model="direct")["episode_id"]
        return c.call("step", episode_id=episode, action={"submit": True})["reward"]


def test_gold_solutions_earn_the_rubric_reward(tmp_path):
    store = tmp_path / "store.sqlite"
    env = load_environment(world=str(SUPPORT_DESK), task_ids=GOLD, store=store, binary=binary())
    scripts = {task: [turn_of(step) for step in solution(SUPPORT_DESK, task)] for task in GOLD}
    with ScriptedOpenAI(scripts) as fake:
        results = evaluate(env, fake, model="gold-script")
    outputs = sorted(results["outputs"], key=lambda o: o["example_id"])
    assert [o["info"]["task_id"] for o in outputs] == GOLD
    for o in outputs:
        assert o["error"] is None, o["error"]
        assert o["reward"] == 1.0, (o["info"]["task_id"], o["reward"], o["completion"][-1])
        assert o["metrics"]["episode_reward"] == 1.0
        # The prompt is what the server gave: instruction + policy, then the
        # customer's opening message.
        assert o["prompt"][0]["role"] == "system" and "Policy:" in o["prompt"][0]["content"]
        assert o["prompt"][1]["role"] == "user"
    assert "billed twice" in outputs[0]["prompt"][1]["content"]
    # The model was offered the world's tools, submit included.
    offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert {"get_ticket", "issue_refund", "submit"} <= offered, sorted(offered)
    # One recorded episode per rollout, under the model's name, each with
    # one step per scripted action.
    rows = stored(store)
    assert sorted((r[1], r[2], r[3], r[4]) for r in rows) == sorted(
        ("gold-script", "submitted", task, len(solution(SUPPORT_DESK, task))) for task in GOLD
    )
    print(f"\nverifiers evaluate: {[(o['info']['task_id'], o['reward']) for o in outputs]}")


def test_a_do_nothing_script_earns_the_low_reward(tmp_path):
    expected = do_nothing_reward("duplicate-charge", tmp_path / "direct.sqlite")
    assert expected < 1.0
    env = load_environment(world="support-desk", task_ids=["duplicate-charge"], store=tmp_path / "store.sqlite", binary=binary())
    with ScriptedOpenAI({"duplicate-charge": []}) as fake:
        results = evaluate(env, fake, model="do-nothing")
    (o,) = results["outputs"]
    assert o["reward"] == expected, o
    assert [(r[2], r[4]) for r in stored(tmp_path / "store.sqlite")] == [("submitted", 0)]
    print(f"\nverifiers evaluate, do nothing: reward {o['reward']}")


def test_a_rollout_stopped_before_the_episode_ends_earns_nothing(tmp_path):
    # verifiers' turn limit stops the rollout at the second model turn
    # (whose tool call verifiers does not run): one step, the episode never
    # ended, so it earns 0 and is recorded as abandoned.
    store = tmp_path / "store.sqlite"
    env = load_environment(world="support-desk", task_ids=["duplicate-charge"], store=store, binary=binary(), max_turns=2)
    with ScriptedOpenAI({"duplicate-charge": [turn_of(step) for step in solution(SUPPORT_DESK, "duplicate-charge")]}) as fake:
        results = evaluate(env, fake, model="cut-short")
    (o,) = results["outputs"]
    assert o["reward"] == 0.0 and o["stop_condition"] == "max_turns_reached", (o["reward"], o["stop_condition"])
    assert [(r[2], r[4]) for r in stored(store)] == [("abandoned", 1)]


def test_bad_inputs_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"unknown world 'nope'.*known worlds: .*support-desk"):
        load_environment(world="nope", binary=binary())
    with pytest.raises(ValueError, match=r"world 'support-desk' .* has no task 'nope'; its tasks: .*duplicate-charge"):
        load_environment(world=str(SUPPORT_DESK), task_ids=["duplicate-charge", "nope"], store=tmp_path / "s.sqlite", binary=binary())
    with pytest.raises(ServerGone, match=r"did not start.*idle-timeout"):
        load_environment(world=str(SUPPORT_DESK), store=tmp_path / "s.sqlite", binary=binary(), server_args=["--idle-timeout", "0"])
