"""OpenEnv's own client and validator against the real `understudy serve --http`.

openenv-core (pinned in scripts/python.sh) is the library OpenEnv users run:
its `GenericEnvClient` speaks WebSocket sessions on `/ws`, and
`validate_running_environment` checks a running server's HTTP surface. Both
run here unmodified against the `understudy` binary ($UNDERSTUDY_BIN, else
the checkout's target/debug build) serving bundled worlds on loopback.
"""

from __future__ import annotations

import pytest
import requests

from openenv import GenericEnvClient
from openenv.cli._validation import validate_running_environment

from understudy_server import MINI, SUPPORT_DESK, http_server, solution, stored

# Every criterion of openenv-core 0.3.0's validator: all apply, and all pass
# (`mcp_endpoint` posts `{}` to `/mcp`, MCP's streamable HTTP, and expects a
# JSON-RPC answer; docs/agent-api.md, "MCP").
CRITERIA = {
    "openapi_version_available",
    "health_endpoint",
    "metadata_endpoint",
    "schema_endpoint",
    "mcp_endpoint",
    "mode_endpoint_consistency",
}


@pytest.fixture(params=["one world", "several worlds"])
def server(request, tmp_path):
    worlds = [SUPPORT_DESK] if request.param == "one world" else [SUPPORT_DESK, MINI]
    store = tmp_path / "store.sqlite"
    with http_server(store, *worlds) as url:
        yield url, store


def test_generic_env_client_runs_a_recorded_episode(server):
    url, store = server
    actions = solution(SUPPORT_DESK, "duplicate-charge")
    with GenericEnvClient(base_url=url).sync() as env:
        result = env.reset(task_id="duplicate-charge", world_id="support-desk", seed=0, model="openenv-generic")
        assert not result.done
        assert "billed twice" in result.observation["text"]
        assert env.state()["step_count"] == 0
        for i, action in enumerate(actions):
            result = env.step(action)
            assert result.observation["ok"], (i, result.observation)
            assert (result.reward, result.done) == (0.0, False), i
        result = env.step({"submit": True})
        assert result.done
        # The gold solution meets every criterion of the task's rubric.
        assert result.reward == 1.0, result
        state = env.state()
        assert (state["status"], state["step_count"], state["reward"]) == ("submitted", len(actions), 1.0)
        record_id = state["record_id"]
    assert stored(store) == [(record_id, "openenv-generic", "submitted", "duplicate-charge", len(actions))]


def test_reset_without_a_task_picks_by_seed_and_errors_are_openenv_errors(server):
    url, store = server
    listed = [(t["world_id"], t["task_id"]) for t in requests.get(f"{url}/tasks", timeout=10).json()["tasks"]]
    with GenericEnvClient(base_url=url).sync() as env:
        # Seed 1 picks the second task `/tasks` lists.
        env.reset(seed=1)
        assert (env.state()["world_id"], env.state()["task_id"]) == listed[1]
        # No seed: seed 0, the first task; the previous episode is closed.
        first = env.reset()
        assert first.observation["content"]["task_id"] == listed[0][1]
        assert (env.state()["world_id"], env.state()["task_id"]) == listed[0]
        with pytest.raises(RuntimeError, match=r"VALIDATION_ERROR"):
            env.step({"args": {}})
        with pytest.raises(RuntimeError, match=r"unknown field.*`seeds`.*VALIDATION_ERROR"):
            env.reset(seeds=3)
        # The running episode survived both refusals.
        assert env.state()["status"] == "in_progress"
    # A new reset, and closing the session, recorded each running episode
    # as abandoned.
    assert [(r[2], r[3]) for r in stored(store)] == [("abandoned", listed[1][1]), ("abandoned", listed[0][1])]


def test_validate_running_environment_passes_every_criterion(server):
    url, _ = server
    report = validate_running_environment(url)
    by_id = {c["id"]: c for c in report["criteria"]}
    assert set(by_id) == CRITERIA, report
    failed = {i: c for i, c in by_id.items() if not c["passed"]}
    assert failed == {}, failed
    assert (report["summary"]["passed_count"], report["summary"]["total_count"]) == (6, 6), report["summary"]
    assert report["passed"] is True, report
    assert by_id["mcp_endpoint"]["actual"] == {"status_code": 200, "jsonrpc": "2.0"}, by_id["mcp_endpoint"]
    assert report["mode"] == "simulation"
    assert report["standard_profile"] == "openenv-http/1.x"
    print(
        f"\nvalidate_running_environment: {report['summary']['passed_count']} of {report['summary']['total_count']} passed"
    )
