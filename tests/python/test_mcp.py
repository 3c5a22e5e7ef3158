"""The official MCP Python SDK against the real `understudy` binary.

`mcp` (pinned in scripts/python.sh) is what MCP users run. Its own
`ClientSession` drives a support-desk task over both of the server's MCP
transports, unmodified: stdio (`stdio_client` spawning `understudy serve
--mcp`) and streamable HTTP (`streamable_http_client` against
`understudy serve --http` on loopback, at `/mcp`). The binary is
$UNDERSTUDY_BIN, else the checkout's target/debug build.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from pathlib import Path

import pytest

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from understudy_server import SUPPORT_DESK, binary, solution, stored
from understudy_server import http_server as serve_http

TASK = "duplicate-charge"
CLIENT = types.Implementation(name="understudy-test", version="1.0")


def stored_once(store: Path, done, seconds: float = 10) -> list[tuple]:
    """The store's episodes once `done(rows)` holds (a closed session's
    episode is closed in the background), or as they are after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        rows = stored(store)
        if done(rows) or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)


def http_server(store: Path):
    return serve_http(store, SUPPORT_DESK)


@contextlib.asynccontextmanager
async def session_over(transport: str, store: Path, query: str, url: str | None = None):
    """A ClientSession over stdio (`serve --mcp` with the query's fields as
    flags) or streamable HTTP (`url` + `/mcp?` + query)."""
    if transport == "stdio":
        flags = {"task_id": "--task", "model": "--model", "seed": "--seed", "world_id": "--world-id"}
        args = ["serve", "--mcp", "--store", str(store), "--durability", "fast", "--world", str(SUPPORT_DESK)]
        for pair in filter(None, query.split("&")):
            key, value = pair.split("=", 1)
            args += [flags[key], value]
        params = StdioServerParameters(command=binary(), args=args, env={"UNDERSTUDY_LOG": "error"})
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT) as session:
                yield session
    else:
        assert url is not None
        async with streamable_http_client(f"{url}/mcp?{query}") as (read, write):
            async with ClientSession(read, write, client_info=CLIENT) as session:
                yield session


async def gold_episode(session: ClientSession) -> tuple[str, int]:
    """Runs the task's gold solution through MCP tools; returns the
    trajectory's id and the number of steps."""
    init = await session.initialize()
    assert init.server_info.name == "understudy"
    # The instructions carry the brief, the customer's message and the policy.
    assert "T-1042" in init.instructions and "billed twice" in init.instructions, init.instructions

    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert {"get_ticket", "lookup_customer", "issue_refund", "close_ticket", "send_message", "submit"} <= set(tools), sorted(tools)
    assert any(name.startswith("view_") for name in tools), sorted(tools)
    refund = tools["issue_refund"]
    assert refund.description and refund.input_schema["type"] == "object"
    assert "amount" in refund.input_schema["properties"]
    assert tools["get_ticket"].annotations.read_only_hint is True
    print(f"\nMCP tools/list: {len(tools)} tools: {sorted(tools)}")

    actions = solution(SUPPORT_DESK, TASK)
    for i, action in enumerate(actions):
        if "tool" in action:
            result = await session.call_tool(action["tool"], action.get("args", {}))
        else:
            result = await session.call_tool("send_message", {"message": action["message"]})
        assert not result.is_error, (i, result.content)
        step = result.structured_content
        assert step["observation"]["ok"] and (step["reward"], step["done"]) == (0.0, False), (i, step)
    result = await session.call_tool("submit", {})
    assert not result.is_error, result.content
    step = result.structured_content
    # The gold solution meets every criterion of the task's rubric.
    assert (step["done"], step["terminated"], step["reward"]) == (True, True, 1.0), step
    assert "Reward: 1.0" in result.content[0].text, result.content
    assert step["info"]["reward_source"] == "rubric"
    print(f"MCP submit: reward {step['reward']}; {result.content[0].text!r}")

    # One session is one episode: it is over now.
    again = await session.call_tool("get_ticket", {"ticket_id": "T-1042"})
    assert again.is_error and "open a new MCP session" in again.content[0].text, again.content
    return step["record_id"], len(actions)


async def refusals(session: ClientSession) -> None:
    """Bad arguments, an unknown tool: what each is, and what it says."""
    await session.initialize()
    # A world tool's arguments are the world's to check: a recorded step
    # whose result is an error naming the argument.
    bad = await session.call_tool("get_invoice", {"invoice_id": 24073})
    assert bad.is_error, bad.content
    assert "invoice_id" in bad.content[0].text, bad.content
    assert bad.structured_content["observation"]["error"]["code"] == "invalid_arguments"
    # The message tool's arguments are checked before any step.
    bad = await session.call_tool("send_message", {"text": "hello"})
    assert bad.is_error and "`text`" in bad.content[0].text and "`message`" in bad.content[0].text, bad.content
    bad = await session.call_tool("send_message", {"message": 3})
    assert bad.is_error and "must be text" in bad.content[0].text, bad.content
    # An unknown tool is a protocol error, not a tool result.
    with pytest.raises(MCPError, match=r"unknown tool `launch_rocket`") as raised:
        await session.call_tool("launch_rocket", {})
    assert raised.value.code == -32602
    print(f"\nMCP refusals: {bad.content[0].text!r}; unknown tool: {raised.value.message!r}")


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_gold_episode_over_mcp_is_recorded_with_its_reward(transport, tmp_path):
    store = tmp_path / "store.sqlite"

    async def run(url: str | None) -> tuple[str, int]:
        async with session_over(transport, store, f"task_id={TASK}&model=mcp-{transport}", url) as session:
            return await gold_episode(session)

    if transport == "http":
        with http_server(store) as url:
            record_id, steps = asyncio.run(run(url))
            rows = stored(store)
    else:
        record_id, steps = asyncio.run(run(None))
        rows = stored(store)
    assert rows == [(record_id, f"mcp-{transport}", "submitted", TASK, steps)]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_bad_arguments_are_tool_errors_and_an_unknown_tool_a_protocol_error(transport, tmp_path):
    store = tmp_path / "store.sqlite"

    async def run(url: str | None) -> None:
        # No model given: the client's name and version are recorded.
        async with session_over(transport, store, f"task_id={TASK}", url) as session:
            await refusals(session)

    expected = [("understudy-test 1.0", "abandoned", TASK, 1)]
    if transport == "http":
        with http_server(store) as url:
            asyncio.run(run(url))
            # Closing the session (DELETE /mcp) abandoned its running episode,
            # with the one refused call recorded as a step.
            rows = stored_once(store, lambda rows: [r[2] for r in rows] == ["abandoned"])
    else:
        asyncio.run(run(None))
        rows = stored(store)
    assert [r[1:] for r in rows] == expected, rows


def test_a_wrong_task_choice_is_a_protocol_error_naming_the_field(tmp_path):
    store = tmp_path / "store.sqlite"

    async def run(url: str, query: str) -> MCPError:
        async with streamable_http_client(f"{url}/mcp?{query}") as (read, write):
            async with ClientSession(read, write) as session:
                try:
                    await session.initialize()
                except MCPError as e:
                    return e
        raise AssertionError(f"initialize with {query} was not refused")

    with http_server(store) as url:
        e = asyncio.run(run(url, "task_id=duplicate-charge&seeds=2"))
        assert e.code == -32602 and "`seeds`" in e.message, e.message
        e = asyncio.run(run(url, "task_id=no-such-task"))
        assert "no-such-task" in e.message and "duplicate-charge" in e.message, e.message
    assert stored(store) == []


def test_serve_mcp_refuses_a_task_it_does_not_serve(tmp_path):
    out = subprocess.run(
        [binary(), "serve", "--mcp", "--store", str(tmp_path / "s.sqlite"), "--world", str(SUPPORT_DESK), "--task", "no-such-task"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert out.returncode != 0
    assert "--mcp" in out.stderr and "no-such-task" in out.stderr, out.stderr
    assert out.stdout == ""
