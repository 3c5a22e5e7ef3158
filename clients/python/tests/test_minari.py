"""Stored episodes become a Minari dataset that the real `minari` loads,
holding exactly what the Gymnasium env showed and was given."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import minari
import pytest

from understudy_gym import UnderstudyEnv
from understudy_gym.minari_export import latest_scores, to_minari

from conftest import MINI, SUPPORT_DESK


def test_stored_episodes_load_in_minari_as_the_env_saw_them(binary, store, tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    env = UnderstudyEnv("upgrade-with-verification", world_dir=SUPPORT_DESK, binary=binary, store=store, durability="fast", model="scripted")
    seen = []
    for seed, messages in ((4, ["Hello!", "What's the billing ZIP code?"]), (9, ["Could you give me your email address?"])):
        obs, _ = env.reset(seed=seed)
        observations, actions = [obs], []
        for m in messages:
            action = json.dumps({"message": m})
            obs, *_ = env.step(action)
            observations.append(obs)
            actions.append(action)
        obs, _, terminated, _, _ = env.step('{"submit": true}')
        assert terminated
        observations.append(obs)
        actions.append('{"submit": true}')
        seen.append((observations, actions))
    env.close()

    native = tmp_path / "episodes.jsonl"
    subprocess.run([binary, "export", "--format", "native", "--store", str(store), "--output", str(native)], check=True, capture_output=True)
    dataset = to_minari(native, "understudy/support-desk-v0", world_dirs=[SUPPORT_DESK], binary=binary, rewards={})

    loaded = minari.load_dataset("understudy/support-desk-v0")
    assert loaded.total_episodes == 2 and dataset.total_episodes == 2
    got = [(list(ep.observations), list(ep.actions)) for ep in loaded.iterate_episodes()]
    assert got == seen
    assert "Sure — our billing ZIP code is 78702." in got[0][0], "text beyond ASCII comes back intact"
    ep = next(loaded.iterate_episodes())
    assert list(ep.terminations) == [False, False, True] and not any(ep.truncations)
    assert list(ep.rewards) == [0.0, 0.0, 0.0]


def test_scores_become_the_last_reward(binary, store, tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    env = UnderstudyEnv("pay-back", world_dir=MINI, binary=binary, store=store, durability="fast")
    env.reset(seed=0)
    env.step('{"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25}}')
    env.close()  # abandoned: not submitted, so no submit step
    native = tmp_path / "episodes.jsonl"
    subprocess.run([binary, "export", "--format", "native", "--store", str(store), "--output", str(native)], check=True, capture_output=True)
    (episode_id,) = [json.loads(line)["episode"]["id"] for line in native.read_text().splitlines()]
    to_minari(native, "understudy/mini-v0", world_dirs=[MINI], binary=binary, rewards={episode_id: 0.75})
    ep = next(minari.load_dataset("understudy/mini-v0").iterate_episodes())
    assert list(ep.rewards) == [0.75]
    assert len(ep.observations) == 2 and list(ep.terminations) == [False]
    assert latest_scores(store) == {}, "nothing scored yet"


def test_a_file_that_is_not_a_native_export_names_its_line(binary, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "understudy.episode/1", "episode": {}, "steps": []}\n{"messages": []}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: expected an object with \"format\""):
        to_minari(bad, "understudy/bad-v0", world_dirs=[MINI], binary=binary)
    bad.write_text("not json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not JSON"):
        to_minari(bad, "understudy/bad-v0", world_dirs=[MINI], binary=binary)
