"""The app against a team hub on loopback: an admin adds an expert and
assigns them a task; the expert signs in from the real window, sees the
assignment, records, sends; the hub then holds the episode. A reviewer
signs in, approves an expert's recording from the review queue while the
hub is down (sent by itself, once, when it is back) and grades an agent
run on the grading sheet; the hub holds the approval and the grade.

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
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

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
    server = HubServer(binary, database)
    try:
        yield HubApi(server.url, token), suffix, server
    finally:
        server.stop()


class HubServer:
    """The hub binary on a loopback port, which stop() and start() keep."""

    def __init__(self, binary: str, database: str):
        self.binary = binary
        self.database = database
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [self.binary, "--database", self.database, "--listen", f"127.0.0.1:{self.port}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        assert "listening on" in line, line

    def stop(self):
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


def test_an_expert_signs_in_sees_the_assignment_records_and_the_hub_holds_it(launch, hub):
    admin, suffix, _ = hub
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


RUNS = ROOT / "tests-e2e" / "data" / "agent-runs.jsonl"
GRADED_TASK = "cancel-no-refund"
JUDGED = "kind-and-clear"
OVERRIDDEN = "told-data-export"


def cli_push(store: Path, lines: list[dict], hub_url: str, token: str):
    """Imports native episode lines into a store of their own and pushes it, as `understudy hub push` does."""
    cli = need("UNDERSTUDY_CLI")
    worlds = Path(os.environ.get("WORLDS_DIR", ROOT / "fixtures" / "worlds"))
    runs = store.with_suffix(".jsonl")
    runs.write_text("".join(json.dumps(l) + "\n" for l in lines))
    for args in (
        ["import", "--store", str(store), "--input", str(runs), "--worlds", str(worlds)],
        ["hub", "push", "--store", str(store), "--hub", hub_url, "--token", token],
    ):
        done = subprocess.run([cli, *args], capture_output=True, text=True)
        assert done.returncode == 0, f"understudy {' '.join(args[:2])}: {done.stdout}{done.stderr}"


def as_experts_run(line: dict, expert_id: str, suffix: str) -> dict:
    """An agent run's line as an expert's recording of the same task."""
    line = json.loads(json.dumps(line))
    line["episode"]["id"] = f"e2e-expert-{suffix}"
    line["episode"]["actor"] = {"kind": "expert", "id": expert_id}
    at = line["episode"]["created_at"]
    line["expert"] = {
        "id": expert_id,
        "name": "Ada Lovelace",
        "domain": "Customer support",
        "credentials": "8 years leading SaaS billing support",
        "credentials_attested": True,
        "verified": False,
        "created_at": at,
        "updated_at": at,
    }
    return line


def test_a_reviewer_approves_through_the_window_while_the_hub_is_down_and_grades_a_run(launch, hub, tmp_path):
    admin, suffix, hub_server = hub
    ada, rita = f"ada-{suffix}", f"rita-{suffix}"
    admin.call("POST", "/v1/people", {"login": ada, "name": "Ada Lovelace", "role": "expert"})
    admin.call("POST", "/v1/people", {"login": rita, "name": "Rita Reviewer", "role": "reviewer", "password": "correct horse battery"})
    ada_token = admin.call("POST", f"/v1/people/{ada}/tokens", {"label": "e2e"})["token"]
    world = admin.call("POST", "/v1/worlds", {"files": world_files(Path(os.environ.get("WORLDS_DIR", ROOT / "fixtures" / "worlds")) / WORLD)})

    # Ada's recording reaches the hub from her store; an agent run to grade from the admin's.
    lines = [json.loads(l) for l in RUNS.read_text().splitlines() if l.strip()]
    agent = next(l for l in lines if l["episode"]["actor"].get("model") == "support-agent-v1" and l["episode"]["task_id"] == GRADED_TASK)
    agent["episode"]["world_hash"] = world["hash"]  # the world as uploaded, whatever the file recorded
    expert_run = as_experts_run(agent, f"x-ada-{suffix}", suffix)
    cli_push(tmp_path / "ada.db", [expert_run], admin.url, ada_token)
    cli_push(tmp_path / "lab.db", [agent], admin.url, admin.token)
    ep, run = expert_run["episode"]["id"], agent["episode"]["id"]

    # Rita signs in from the window; her queue lists Ada's recording from the hub.
    app = launch()
    app.css("[data-screen=home]")
    app.create_profile(name="Rita Reviewer", domain="Support quality", credentials="Reviews support work")
    app.clickable("[data-testid=hub-open-sign-in]").click()
    app.css("[data-screen=hub-sign-in]")
    app.type_into("[data-testid=hub-url]", admin.url)
    app.type_into("[data-testid=hub-login]", rita)
    app.type_into("[data-testid=hub-password]", "correct horse battery")
    app.clickable("[data-testid=hub-sign-in]").click()
    app.css("[data-screen=home]")
    app.wait_text("[data-testid=hub-who]", "Rita Reviewer", timeout=60)
    app.clickable("[data-testid=open-review]").click()
    app.css("[data-screen=queue]")
    row = f"[data-testid=queue-row][data-episode='{ep}']"
    app.wait_text(f"{row} .queue-who", "Ada Lovelace", timeout=60)
    app.wait_text("[data-testid=hub-screen-note]", "Your decisions go to the team hub as Rita Reviewer")
    assert app.text_of("[data-testid=reviewer]") == "Rita Reviewer"
    app.shot("hub-10-review-queue")

    # The hub goes down; she approves anyway: saved here, waiting.
    hub_server.stop()
    app.clickable(f"{row} [data-testid=approve]").click()
    app.css("[data-testid=decision]")
    app.keys(Keys.CONTROL, Keys.ENTER)
    app.wait_text("[data-testid=hub-screen-work]", "1 saved here, will be sent to the hub", timeout=30)
    Select(app.clickable("[data-testid=filter-status]")).select_by_visible_text("All")
    app.wait_text(f"{row} [data-testid=hub-work]", "Saved here, will be sent to the hub")
    assert app.css(row).get_attribute("data-status") == "approved"
    time.sleep(6)  # a retry while the hub is still down changes nothing
    assert app.css(f"{row} [data-testid=hub-work]").get_attribute("data-state") == "waiting"
    app.shot("hub-11-approved-offline")

    # Back: the app sends it by itself, once, attributed to Rita.
    hub_server.start()
    app.wait_text(f"{row} [data-testid=hub-work]", "Sent to the hub", timeout=60)
    app.wait_text("[data-testid=hub-screen-work]", "Everything is sent to the hub")
    app.shot("hub-12-approval-sent")
    reviews = [r for r in admin.call("GET", "/v1/reviews?after=0") if r["episode_id"] == ep]
    assert [(r["decision"], r["reviewer"]) for r in reviews] == [("approve", "Rita Reviewer")], reviews
    [on_hub] = [e for e in admin.call("GET", f"/v1/episodes?task={GRADED_TASK}") if e["record"]["id"] == ep]
    assert on_hub["record"]["status"] == "approved"

    # The agent run, pulled from the hub, graded on the sheet: the grade arrives.
    ActionChains(app.driver).send_keys(Keys.ESCAPE).perform()
    app.css("[data-screen=home]")
    app.clickable("[data-testid=open-grading-list]").click()
    app.css("[data-screen=grading]")
    grading_row = f"[data-testid=grading-row][data-episode='{run}']"
    app.clickable(f"{grading_row} [data-testid=open-grading]", timeout=60).click()
    app.css("[data-screen=grade-run]")
    app.wait_text("[data-testid=hub-screen-note]", "Your grades go to the team hub as Rita Reviewer")
    card = f"[data-criterion='{JUDGED}']"
    app.clickable(f"{card} [data-testid=grade]").click()
    app.clickable(f"{card} [data-testid=grade-met]").click()
    app.type_into(f"{card} [data-testid=grade-reason]", "Polite and unambiguous.")
    app.clickable(f"{card} [data-testid=save-grade]").click()
    app.wait_text(f"{card} [data-testid=given]", "Your grade: met")
    app.wait_text(".gr-sheet-foot [data-testid=hub-work]", "Sent to the hub", timeout=60)
    app.shot("hub-13-grade-sent")
    judged = [j for j in admin.call("GET", f"/v1/judgments?task={GRADED_TASK}") if j["episode_id"] == run]
    assert [(j["judgment"]["criterion_id"], j["judgment"]["met"], j["judgment"]["reason"]) for j in judged] == [
        (JUDGED, True, "Polite and unambiguous.")
    ], judged

    # She overrides an automatic check on the same sheet: it reaches the
    # hub too, with what the check had found.
    auto = f"[data-criterion='{OVERRIDDEN}']"
    assert app.css(f"{auto} [data-testid=verdict]").get_attribute("data-met") == "true"
    app.clickable(f"{auto} [data-testid=override]").click()
    app.type_into(f"{auto} [data-testid=grade-reason]", "It never says how to reach the export before April 1.")
    app.clickable(f"{auto} [data-testid=save-grade]").click()
    app.wait_text(f"{auto} [data-testid=given]", "You overrode the check: not met")
    deadline = time.time() + 60
    while True:
        overrides = [o for o in admin.call("GET", f"/v1/overrides?task={GRADED_TASK}") if o["episode_id"] == run]
        if overrides or time.time() > deadline:
            break
        time.sleep(0.5)
    assert [(o["override"]["criterion_id"], o["override"]["original_met"], o["override"]["met"]) for o in overrides] == [
        (OVERRIDDEN, True, False)
    ], overrides
    app.wait_text(".gr-sheet-foot [data-testid=hub-work]", "Sent to the hub", timeout=60)
    app.shot("hub-14-override-sent")

    # Ada's profile came with her recording, but she does not use this
    # computer: the start screen offers Rita's profile only.
    for _ in range(3):  # the sheet, then the grading list
        if app.driver.find_elements(By.CSS_SELECTOR, "[data-screen=home]"):
            break
        ActionChains(app.driver).send_keys(Keys.ESCAPE).perform()
        time.sleep(0.5)
    app.css("[data-screen=home]")
    app.wait_text("[data-testid=expert-profile] .expert-name", "Rita Reviewer")
    switch = app.driver.find_elements(By.CSS_SELECTOR, "[data-testid=expert-profile] select[aria-label='Switch expert']")
    assert not switch or "Ada Lovelace" not in switch[0].text, switch[0].text
    app.shot("hub-15-start-screen-local-profiles")
