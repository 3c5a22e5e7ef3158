"""understudy_gym against the real server: Gymnasium's checker, a full
support-desk episode, bad actions, both transports, and the record in the
store."""

from __future__ import annotations

import json
import os
import sqlite3
from understudy_gym.registration import tomllib
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import understudy_gym
from understudy_gym import HttpClient, HttpServer, UnderstudyEnv, UnderstudyError, run_episode, scripted_policy

from conftest import MINI, SUPPORT_DESK


def solution(task: str) -> list[dict]:
    for path in (SUPPORT_DESK / "tasks").glob("*.toml"):
        for t in tomllib.loads(path.read_text())["tasks"]:
            if t["id"] == task:
                return t["solution"]
    raise KeyError(task)


def stored(store: Path) -> list[tuple]:
    with sqlite3.connect(store) as db:
        return db.execute(
            "SELECT e.id, e.actor_kind, e.actor_id, e.status, e.task_id, count(s.idx) FROM episodes e LEFT JOIN steps s ON s.episode_id = e.id GROUP BY e.id ORDER BY e.created_at"
        ).fetchall()


def test_every_bundled_task_is_registered():
    ids = [i for i in gym.registry if i.startswith("understudy/")]
    assert "understudy/support-desk-duplicate-charge" in ids
    world, tasks = understudy_gym.world_tasks(SUPPORT_DESK)
    assert world == "support-desk"
    assert {f"understudy/support-desk-{t}" for t in tasks} <= set(ids)
    assert understudy_gym.register_worlds(MINI) == ["understudy/mini-pay-back", "understudy/mini-frozen"]


def test_passes_gymnasiums_env_checker(binary, store):
    env = gym.make("understudy/support-desk-duplicate-charge", binary=binary, store=store, model="checker")
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


def test_a_support_desk_task_end_to_end_over_stdio(binary, store):
    env = gym.make("understudy/support-desk-duplicate-charge", binary=binary, store=store, model="scripted")
    obs, info = env.reset(seed=0)
    assert "billed twice" in obs
    assert info["task_id"] == "duplicate-charge" and info["policy"]
    assert env.observation_space.contains(obs)
    tools = understudy_gym.tools_as_openai_functions(env)
    names = {t["function"]["name"] for t in tools}
    assert {"issue_refund", "get_ticket", "submit"} <= names
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in tools)

    actions = solution("duplicate-charge")
    for i, action in enumerate(actions):
        obs, reward, terminated, truncated, info = env.step(json.dumps(action))
        assert (reward, terminated, truncated) == (0.0, False, False), i
        assert info["observation"]["ok"], (i, obs)
        assert info["steps"] == i + 1
    obs, reward, terminated, truncated, info = env.step({"submit": True})
    assert terminated and not truncated
    assert isinstance(reward, float)
    assert info["reward_source"] in ("rubric", "none")
    record_id = env.unwrapped.record_id
    env.close()
    rows = stored(store)
    assert rows == [(record_id, "agent", "scripted", "submitted", "duplicate-charge", len(actions))]


def test_run_episode_with_a_scripted_policy_over_http(http_server, store):
    actions = solution("duplicate-charge")
    result = run_episode(
        "understudy/support-desk-duplicate-charge",
        scripted_policy(actions),
        seed=3,
        url=http_server,
        model="scripted-http",
    )
    assert result.terminated and not result.truncated
    assert result.steps == len(actions) + 1
    assert result.total_reward == result.final_reward
    rows = stored(store)
    assert [(r[0], r[2], r[3], r[5]) for r in rows] == [(result.record_id, "scripted-http", "submitted", len(actions))]


def test_a_server_with_a_token_needs_it_and_the_client_sends_it(binary, store, monkeypatch):
    token = "s3cret-token"
    with HttpServer([MINI], store=store, binary=binary, env={**os.environ, "UNDERSTUDY_TOKEN": token}) as server:
        url = server.url
        monkeypatch.delenv("UNDERSTUDY_TOKEN", raising=False)
        with pytest.raises(UnderstudyError) as refused:
            HttpClient(url).call("health")
        assert refused.value.code == "unauthorized"
        assert HttpClient(url, token=token).call("health")["status"] == "healthy"
        monkeypatch.setenv("UNDERSTUDY_TOKEN", token)
        env = UnderstudyEnv("pay-back", url=url, model="with-token")
        env.reset(seed=0)
        env.close()
        assert [r[2] for r in stored(store)] == ["with-token"]


def test_bad_actions_are_observations_or_errors_and_the_episode_goes_on(binary, store):
    env = UnderstudyEnv("pay-back", MINI, binary=binary, store=store)
    env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step("{not json")
    assert obs.startswith("Error:") and info["error"]["code"] == "invalid_action"
    assert (reward, terminated, truncated) == (0.0, False, False)
    obs, *_ , info = env.step(json.dumps({"tool": "transfer", "args": [1]}))
    assert info["error"]["code"] == "invalid_action"
    # World-level failures come back from the world itself, and are steps.
    obs, *_ , info = env.step(json.dumps({"tool": "launch_rocket", "args": {}}))
    assert info["observation"]["error"]["code"] == "unknown_tool" and info["steps"] == 1
    obs, *_ , info = env.step({"name": "get_account", "arguments": json.dumps({"account_id": "A-1"})})
    assert info["observation"]["ok"] and "Ada" in obs

    strict = UnderstudyEnv("pay-back", MINI, binary=binary, store=store, invalid_action="raise")
    strict.reset()
    with pytest.raises(UnderstudyError) as e:
        strict.step("[]")
    assert e.value.code == "invalid_action"
    strict.close()

    # Invalid actions count toward the step limit (5 for pay-back).
    env.reset()
    for _ in range(4):
        *_, truncated, _info = env.step("nope")
        assert not truncated
    *_, truncated, _info = env.step("nope")
    assert truncated
    env.close()


def test_step_limit_and_episode_over(binary, store):
    env = UnderstudyEnv("pay-back", MINI, binary=binary, store=store)
    env.reset()
    look = json.dumps({"tool": "get_account", "args": {"account_id": "A-1"}})
    results = [env.step(look) for _ in range(5)]
    assert [r[3] for r in results] == [False] * 4 + [True]
    with pytest.raises(RuntimeError):
        env.step(look)
    assert env.unwrapped.state()["truncated"] is True
    env.close()


def test_closing_mid_episode_records_it_as_abandoned(binary, store):
    env = UnderstudyEnv("pay-back", MINI, binary=binary, store=store, model="quitter")
    env.reset()
    env.step(json.dumps({"message": "Hello"}))
    env.step(json.dumps({"message": "Still there?"}))
    env.reset()  # the first episode is given up
    env.step(json.dumps({"message": "Hello again"}))
    env.close()  # and so is the second
    env.close()  # closing twice is fine
    assert [(r[2], r[3], r[5]) for r in stored(store)] == [("quitter", "abandoned", 2), ("quitter", "abandoned", 1)]


def test_seeded_resets_repeat(binary, store):
    env = UnderstudyEnv("pay-back", MINI, binary=binary, store=store)
    a = env.reset(seed=5)
    b = env.reset(seed=5)
    assert a[0] == b[0]
    assert env.unwrapped.state()["seed"] == 5
    env.close()


def test_a_missing_binary_or_world_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("UNDERSTUDY_BIN", raising=False)
    monkeypatch.setattr(understudy_gym.client, "_repo_root", lambda: None)
    with pytest.raises(FileNotFoundError, match="UNDERSTUDY_BIN"):
        understudy_gym.StdioClient([MINI], binary=tmp_path / "nope")
    with pytest.raises(ValueError, match="world_dir"):
        UnderstudyEnv("pay-back")


def test_unknown_task_is_reported_by_the_server(binary, store):
    env = UnderstudyEnv("no-such-task", MINI, binary=binary, store=store)
    with pytest.raises(UnderstudyError) as e:
        env.reset()
    assert e.value.code == "unknown_task" and "no-such-task" in e.value.message
    env.close()


ASK_ZIP = json.dumps({"message": "Could you confirm the billing ZIP code on the account?"})


def test_the_async_vector_env_works_with_default_settings(binary, store):
    """make_vec(..., "async") with Gymnasium's defaults (shared memory on):
    observations with characters outside printable ASCII (an em dash) pass
    through shared memory intact."""
    envs = gym.make_vec(
        "understudy/support-desk-upgrade-with-verification",
        num_envs=2,
        vectorization_mode="async",
        binary=binary,
        store=str(store),
        durability="fast",
        model="vector-async",
    )
    try:
        obs, _ = envs.reset(seed=5)
        assert len(obs) == 2 and all(isinstance(o, str) and o for o in obs)
        obs, reward, terminated, truncated, _ = envs.step((ASK_ZIP, ASK_ZIP))
        assert list(obs) == ["Sure — our billing ZIP code is 78702."] * 2
        assert not any(terminated) and not any(truncated)
    finally:
        envs.close()
    assert [r[2] for r in stored(store)] == ["vector-async", "vector-async"]


def test_unicode_text_round_trips_through_shared_memory():
    from gymnasium.vector.utils.shared_memory import (
        create_shared_memory,
        read_from_shared_memory,
        write_to_shared_memory,
    )

    space = understudy_gym.UnicodeText(8)
    memory = create_shared_memory(space, n=3)
    for i, text in enumerate(["café — ok", "", "\U0001f600x"]):
        write_to_shared_memory(space, i, text, memory)
    # Longer than the space is cut at its length; the empty text stays empty.
    view = read_from_shared_memory(space, memory, n=3)
    assert view == ("café — o", "", "\U0001f600x")
    # The view is live: what is written later is what it reads.
    write_to_shared_memory(space, 1, "later", memory)
    assert view[1] == "later" and view[-1] == "\U0001f600x" and view[:2] == ("café — o", "later")


def busy_server(binary: str, store: Path) -> HttpServer:
    return HttpServer([MINI], store=store, binary=binary, extra_args=["--max-concurrent", "1"])


def test_a_reset_waits_for_a_free_slot_when_the_server_is_full(binary, store):
    import threading
    import time

    with busy_server(binary, store) as server:
        url = server.url
        first = UnderstudyEnv("pay-back", url=url, model="first")
        first.reset(seed=0)
        second = UnderstudyEnv("pay-back", url=url, model="second", busy_timeout=30)
        done: dict = {}

        def reset_second():
            started = time.monotonic()
            second.reset(seed=0)
            done["waited"] = time.monotonic() - started

        waiter = threading.Thread(target=reset_second)
        waiter.start()
        time.sleep(1.0)
        assert not done, "the second reset went through while the server was full"
        first.close()  # frees the only slot
        waiter.join(timeout=30)
        assert "waited" in done and done["waited"] >= 1.0
        second.close()
        assert [r[2] for r in stored(store)] == ["first", "second"]


def test_a_full_server_is_reported_once_the_wait_is_over(binary, store):
    with busy_server(binary, store) as server:
        url = server.url
        first = UnderstudyEnv("pay-back", url=url)
        first.reset(seed=0)
        with pytest.raises(UnderstudyError) as busy:
            UnderstudyEnv("pay-back", url=url, busy_timeout=0.3).reset(seed=0)
        assert busy.value.code == "too_many_episodes" and busy.value.status == 429
        with pytest.raises(ValueError, match="busy_timeout"):
            HttpClient(url, busy_timeout=-1)
        first.close()
