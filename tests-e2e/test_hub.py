"""The app against a team hub on loopback: an admin adds an expert and
assigns them a task; the expert signs in from the real window, sees the
assignment, records, sends; the hub then holds the episode.

scripts/app.sh starts a throwaway PostgreSQL (scripts/hub.sh) for this
file and exports UNDERSTUDY_HUB_TEST_DATABASE, HUB_BINARY (understudy-hub)
and UNDERSTUDY_CLI (understudy, for the admin's bootstrap). Without them
the test is skipped outside CI and fails under CI=true.
"""

import json
import os
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TASK = "duplicate-charge"
WORLD = "support-desk"


def need(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        message = f"{name} is not set: the hub e2e needs scripts/app.sh's PostgreSQL and hub binaries"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return value


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HubApi:
    """The hub's HTTP API, as the test's admin or anyone with a token."""

    def __init__(self, url: str, token: str):
        self.url = url
        self.token = token

    def call(self, method: str, path: str, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{method} {path}: HTTP {e.code}: {e.read().decode(errors='replace')}") from e


def world_files(folder: Path) -> list[dict]:
    return [
        {"path": p.relative_to(folder).as_posix(), "hex": p.read_bytes().hex()}
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    ]


@pytest.fixture
def hub():
    """A hub server on loopback over the e2e PostgreSQL, with an admin."""
    database = need("UNDERSTUDY_HUB_TEST_DATABASE")
    binary = need("HUB_BINARY")
    cli = need("UNDERSTUDY_CLI")
    # The cluster is the stage's own; a suffix keeps reruns apart.
    suffix = secrets.token_hex(3)
    admin = f"admin-{suffix}"
    subprocess.run(
        [cli, "hub", "user", "add", "--database", database, "--login", admin, "--name", "Lab admin", "--role", "admin"],
        check=True,
        capture_output=True,
    )
    token = subprocess.run(
        [cli, "hub", "token", "--database", database, "--login", admin],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip().splitlines()[-1].strip()
    assert token.startswith("ush_"), token
    port = free_port()
    server = subprocess.Popen(
        [binary, "--database", database, "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        assert "listening on" in line, line
        yield HubApi(f"http://127.0.0.1:{port}", token), suffix
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_an_expert_signs_in_sees_the_assignment_records_and_the_hub_holds_it(launch, hub):
    admin, suffix = hub
    login = f"ada-{suffix}"
    admin.call("POST", "/v1/people", {"login": login, "name": "Ada Lovelace", "role": "expert", "password": "correct horse battery"})
    world = admin.call("POST", "/v1/worlds", {"files": world_files(Path(os.environ.get("WORLDS_DIR", ROOT / "fixtures" / "worlds")) / WORLD)})
    assert world["world_id"] == WORLD
    admin.call("POST", "/v1/assignments", {"world_hash": world["hash"], "task_id": TASK, "experts": [login], "due_at": "2030-03-04T17:00:00Z"})

    app = launch()
    app.css("[data-screen=home]")
    app.create_profile()
    card = app.css("[data-testid=hub-card]")
    assert "Not connected" in card.text
    app.shot("hub-01-not-connected")

    # Sign in: a wrong password first, told plainly; then the right one.
    app.clickable("[data-testid=hub-open-sign-in]").click()
    app.css("[data-screen=hub-sign-in]")
    app.type_into("[data-testid=hub-url]", admin.url)
    app.type_into("[data-testid=hub-login]", login)
    app.type_into("[data-testid=hub-password]", "not my password")
    app.shot("hub-02-sign-in")
    app.clickable("[data-testid=hub-sign-in]").click()
    app.wait_text("[role=alert]", "do not match an account on this hub", timeout=60)
    app.shot("hub-03-sign-in-refused")
    app.type_into("[data-testid=hub-password]", "correct horse battery")
    app.clickable("[data-testid=hub-sign-in]").click()

    # Home: who is signed in, and the assignment.
    app.css("[data-screen=home]")
    app.wait_text("[data-testid=hub-who]", "Ada Lovelace", timeout=60)
    app.wait_text("[data-testid=hub-waiting]", "Everything is sent")
    assigned = app.css(f"[data-testid=hub-assignments] [data-assignment='{TASK}']")
    app.wait_text(f"[data-testid=hub-assignments] [data-assignment='{TASK}']", "Refund")
    assert "due" in assigned.text
    app.shot("hub-04-assigned")

    # Record one action of the assigned task, then back home.
    app.clickable(f"[data-assignment='{TASK}'] button").click()
    app.css("[data-screen=workspace]")
    app.css("[data-testid=records]")
    app.open_tool("look up", "lookup_customer")
    app.fill("lookup_customer", email="dana.whitfield@harborlight.io")
    app.run(1)
    app.clickable("button[title^='Back to the task list']").click()
    app.css("[data-screen=home]")
    app.wait_text("[data-testid=hub-waiting]", "1 recording waiting to be sent")
    app.shot("hub-05-waiting")

    # Send: the hub holds the episode, its one step, owned by the expert.
    app.clickable("[data-testid=hub-sync]").click()
    app.wait_text("[data-testid=hub-waiting]", "Everything is sent", timeout=60)
    app.wait_text("[data-testid=hub-last-sent]", "Last sent")
    app.shot("hub-06-sent")
    episodes = [e for e in admin.call("GET", f"/v1/episodes?task={TASK}") if e["owner"] == login]
    assert len(episodes) == 1, episodes
    assert episodes[0]["record"]["world_hash"] == world["hash"]
    assert episodes[0]["kept_steps"] == 1
    assert episodes[0]["record"]["status"] == "paused"

    # The hub going away is told plainly; the work stays here.
    admin.call("POST", f"/v1/people/{login}/tokens", {"label": "spare"})
    for t in admin.call("GET", f"/v1/people/{login}/tokens"):
        admin.call("POST", f"/v1/tokens/{t['id']}/revoke", {})
    app.clickable("[data-testid=hub-sync]").click()
    app.wait_text("[data-testid=hub-error]", "access to the hub was withdrawn", timeout=30)
    app.shot("hub-07-revoked")
    app.clickable("[data-testid=hub-sign-out]").click()
    app.wait_text("[data-testid=hub-card]", "Not connected")
