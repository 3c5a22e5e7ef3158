"""Two graders grade an imported agent run in the real window: a refused
file is listed line by line and stores nothing; a good one is imported; the
first grader grades the judged criterion, overrides an automatic check
(the original score stays in the store) and asks the second to grade too;
the second grades; the agreement panel shows Cohen's kappa.

The file dialog is the system's own (GTK) window, outside the page
WebDriver drives: the test types into it through the X server (xdotool),
so the path goes through the real dialog too."""

import json
import shutil
import subprocess
import time
from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from conftest import ARTIFACTS
from test_capture import store

RUNS = Path(__file__).resolve().parent / "data" / "agent-runs.jsonl"
TASK = "cancel-no-refund"
JUDGED = "kind-and-clear"
OVERRIDDEN = "told-data-export"
DIALOG_TITLE = "Import agent runs"


def choose_in_file_dialog(path: Path, shot: str | None = None):
    """Picks `path` in the system's own file dialog (GTK), as a person
    would from the keyboard: Ctrl+L, the path, Enter. WebDriver reaches
    only the page, so the keys go through the X server (xdotool); `shot`
    saves the whole screen with the dialog open."""

    def xdotool(*args: str, timeout: float = 20) -> str:
        done = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=timeout, check=True)
        return done.stdout

    window = xdotool("search", "--sync", "--onlyvisible", "--name", DIALOG_TITLE).split()[0]
    xdotool("windowfocus", "--sync", window)
    if shot:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        subprocess.run(["import", "-window", "root", str(ARTIFACTS / f"{shot}.png")], check=True, timeout=20)
    xdotool("key", "--clearmodifiers", "ctrl+l")
    time.sleep(0.3)
    xdotool("type", "--delay", "5", str(path))
    time.sleep(0.3)
    xdotool("key", "Return")
    # GTK's location bar may take the first Enter for its completion list
    # (a person then presses Enter again); the dialog must be gone before
    # the test goes on, or the next dialog search could find this one.
    def still_open() -> bool:
        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", DIALOG_TITLE], capture_output=True, text=True, timeout=20)
        return window in found.stdout.split()

    deadline = time.monotonic() + 10
    pressed_again = False
    while still_open():
        if time.monotonic() > deadline:
            raise AssertionError(f"the file dialog stayed open after choosing {path}")
        if not pressed_again and time.monotonic() > deadline - 8.5:
            xdotool("windowfocus", "--sync", window)
            xdotool("key", "Return")
            pressed_again = True
        time.sleep(0.1)


def press(app, *keys):
    ActionChains(app.driver).send_keys(*keys).perform()


def type_reason(app, cid: str, text: str):
    """Types a reason where the grade form puts the cursor (its reason box)."""
    box = f"[data-criterion='{cid}'] [data-testid=grade-reason]"
    app.wait().until(lambda d: d.execute_script("return document.activeElement === document.querySelector(arguments[0])", box))
    press(app, text)
    app.wait().until(lambda d: d.execute_script("return document.querySelector(arguments[0]).value", box) == text)


def criterion(app, cid: str) -> str:
    return f"[data-criterion='{cid}']"


def open_grading_list(app):
    app.clickable("[data-testid=open-grading-list]").click()
    app.css("[data-screen=grading]")


def test_two_graders_grade_an_imported_agent_run_and_see_kappa(launch, data_dir, tmp_path):
    app = launch()
    app.create_profile(name="Ben Okoro", domain="Support quality", credentials="Grades support work")
    app.clickable("[data-testid=expert-profile] button.btn-ghost").click()
    app.create_profile(name="Ana Ruiz", domain="Support operations", credentials="Runs the support team")
    open_grading_list(app)
    app.css("[data-testid=grading-empty]")
    assert app.text_of("[data-testid=grader-name]") == "Ana Ruiz"

    # A file with a broken line and an expert's recording: refused whole.
    good_lines = RUNS.read_text().splitlines()
    expert_run = json.loads(good_lines[0])
    expert_run["episode"]["id"] = "0190aaaa-0000-7000-8000-000000000000"
    expert_run["episode"]["actor"] = {"kind": "expert", "id": "x-1"}
    bad = tmp_path / "runs-with-mistakes.jsonl"
    bad.write_text("\n".join(good_lines + ['{"format": "understudy.episode/1", "episode": ', json.dumps(expert_run)]) + "\n")
    app.keys(Keys.CONTROL, "i")
    choose_in_file_dialog(bad, shot="40-grading-file-dialog")
    app.css("[data-testid=import-problems]")
    problems = [p.text for p in app.all("[data-testid=import-problem]")]
    assert len(problems) == 2, problems
    assert problems[0].startswith("Line 3: Not valid JSON"), problems
    assert problems[1].startswith("Line 4: ") and "not by an agent" in problems[1], problems
    assert "Nothing was imported" in app.text_of("[data-testid=import-problems]")
    assert app.all("[data-testid=grading-row]") == []
    conn = store(data_dir)
    assert conn.execute("SELECT count(*) FROM episodes").fetchone()[0] == 0
    conn.close()
    app.shot("41-grading-import-refused")

    # The good file, from the button this time.
    good = tmp_path / "agent-runs.jsonl"
    shutil.copy(RUNS, good)
    app.clickable("[data-testid=import-runs]").click()
    choose_in_file_dialog(good)
    app.wait_text("[data-testid=import-done]", "Imported 2 agent runs")
    app.wait_count("[data-testid=grading-row]", 2)
    run = app.js(
        "return [...document.querySelectorAll('[data-testid=grading-row]')]"
        ".find(r => r.textContent.includes('support-agent-v1')).dataset.episode"
    )
    row = f"[data-testid=grading-row][data-episode='{run}']"

    # Ana asks Ben to grade the run too.
    Select(app.clickable(f"{row} [data-testid=assign-select]")).select_by_visible_text("Ben Okoro")
    app.clickable(f"{row} [data-testid=assign]").click()
    app.wait_text(f"{row} .gr-graders", "Ben Okoro · grading")
    app.shot("42-grading-runs")

    # Ana's sheet: the judged criterion first, by keyboard.
    app.clickable(f"{row} [data-testid=open-grading]").click()
    app.css("[data-screen=grade-run]")
    app.wait_count("[data-testid=criterion]", 14)
    assert "waiting for a grade" in app.text_of("[data-testid=automatic-score]")
    assert app.all("[data-testid=criterion]")[0].get_attribute("data-criterion") == JUDGED
    # Tab lands on a criterion card as it would for a keyboard user.
    app.js("arguments[0].focus()", app.all("[data-testid=criterion]")[0])
    press(app, "y")
    app.css(f"{criterion(app, JUDGED)} [data-testid=grade-form]")
    type_reason(app, JUDGED, "Clear no, one reason, and warm about the closing.")
    app.keys(Keys.CONTROL, Keys.ENTER)
    app.wait_text(f"{criterion(app, JUDGED)} [data-testid=given]", "Your grade: met")
    assert app.css(f"{criterion(app, JUDGED)} [data-testid=your-grade]").get_attribute("data-met") == "true"

    # Evidence reads in the world's words: column labels, and a pattern as
    # the phrases it accepts, never a raw column name or regex.
    found = app.text_of(f"{criterion(app, 'cancelled-at-period-end')} [data-testid=evidence]")
    assert "Cancels at renewal" in found and "cancel_at_period_end" not in found, found
    assert found.startswith("It is ") and "the value is" not in found, found
    # The run's steps by the tools' titles, as the tool finder names them.
    steps = app.text_of(".gr-step-tool")
    assert steps.startswith("Open ticket — Ticket id: T-10"), steps
    said = app.text_of(f"{criterion(app, OVERRIDDEN)} [data-testid=evidence]")
    assert "wording like “export”" in said and "(?i)" not in said, said
    # A tool check names the tool by its title, and says what happened.
    credit = app.text_of(f"{criterion(app, 'credit-to-leaver')} [data-testid=evidence]")
    assert credit.startswith("“Apply account credit” was never used"), credit
    assert "apply_credit" not in credit and "call(s)" not in credit, credit

    # An automatic check she disagrees with: its evidence is shown, she overrides it.
    auto = criterion(app, OVERRIDDEN)
    assert app.css(f"{auto} [data-testid=verdict]").get_attribute("data-met") == "true"
    assert app.text_of(f"{auto} [data-testid=evidence]") != ""
    app.clickable(f"{auto} [data-testid=override]").click()
    assert app.css(f"{auto} [data-testid=grade-not-met]").get_attribute("aria-checked") == "true"
    type_reason(app, OVERRIDDEN, "It names the export but never says how to reach it before April 1.")
    app.clickable(f"{auto} [data-testid=save-grade]").click()
    app.wait_text(f"{auto} [data-testid=given]", "You overrode the check: not met")
    assert app.css(f"{auto} [data-testid=verdict]").get_attribute("data-met") == "false"
    assert "check: met" in app.text_of(auto)
    graded = app.text_of("[data-testid=graded-score]")
    assert graded.replace(".", "").isdigit() and float(graded) < 1.0, graded
    app.shot("43-grade-run")

    conn = store(data_dir)
    ana = conn.execute("SELECT id FROM experts WHERE name = 'Ana Ruiz'").fetchone()[0]
    ben = conn.execute("SELECT id FROM experts WHERE name = 'Ben Okoro'").fetchone()[0]
    override = conn.execute("SELECT criterion_id, original_met, met, grader, reason, at FROM score_overrides WHERE episode_id = ?", (run,)).fetchall()
    assert [tuple(o)[:4] for o in override] == [(OVERRIDDEN, 1, 0, ana)]
    assert override[0]["at"] and override[0]["reason"].startswith("It names the export")
    scores = conn.execute("SELECT pending, detail FROM scores WHERE episode_id = ?", (run,)).fetchall()
    assert len(scores) == 1, "the automatic score is stored once and kept"
    original = {c["id"]: c["met"] for c in json.loads(scores[0]["detail"])["criteria"]}
    assert original[OVERRIDDEN] is True and original[JUDGED] is None
    judged = conn.execute("SELECT criterion_id, met, judge FROM judgments WHERE episode_id = ?", (run,)).fetchall()
    assert [tuple(j) for j in judged] == [(JUDGED, 1, ana)]
    conn.close()

    app.keys(Keys.CONTROL, "s")
    app.css("[data-testid=grading-done]")
    press(app, Keys.ESCAPE)
    app.css("[data-screen=grading]")
    app.wait_text("[data-testid=agreement-value]", "Only one grader")

    # Ben grades the same run.
    press(app, Keys.ESCAPE)
    app.css("[data-screen=home]")
    Select(app.clickable("select[aria-label='Switch expert']")).select_by_visible_text("Ben Okoro")
    app.wait_text("[data-testid=expert-profile]", "Ben Okoro")
    open_grading_list(app)
    app.wait_text(f"{row} .queue-who", "Assigned to you")
    app.clickable(f"{row} [data-testid=open-grading]").click()
    app.css("[data-screen=grade-run]")
    app.clickable(f"{criterion(app, JUDGED)} [data-testid=grade]").click()
    app.clickable(f"{criterion(app, JUDGED)} [data-testid=grade-met]").click()
    type_reason(app, JUDGED, "Polite and unambiguous.")
    app.clickable(f"{criterion(app, JUDGED)} [data-testid=save-grade]").click()
    app.wait_text(f"{criterion(app, JUDGED)} [data-testid=given]", "Your grade: met")
    # His sheet is his own: Ana's override is not his.
    assert app.css(f"{criterion(app, OVERRIDDEN)} [data-testid=verdict]").get_attribute("data-met") == "true"
    app.clickable("[data-testid=finish-grading]").click()
    app.css("[data-testid=grading-done]")
    app.clickable("[data-testid=back-to-runs]").click()
    app.css("[data-screen=grading]")

    # Two graders: Cohen's kappa over the rubric's 14 criteria of the run.
    # They differ on one (Ana's override): p_o = 13/14; Ana said met 10
    # times, Ben 11, so p_e = (10·11 + 4·3) / 14² and kappa = 0.81.
    app.wait_text(f"{row} .gr-graders", "Ben Okoro · done")
    app.wait_text("[data-testid=agreement-value]", "0.81 (almost perfect)")
    panel = app.text_of("[data-testid=agreement-panel]")
    assert "Cohen's κ" in panel and "Ben Okoro, Ana Ruiz" in panel
    assert "93%" in panel
    app.css("[data-testid=agreement-chart]")
    overridden_row = app.text_of(f"[data-testid=agreement-table] tr[data-criterion='{OVERRIDDEN}']")
    assert "0%" in overridden_row, overridden_row
    app.shot("44-grading-agreement")

    # The run that refunded: the check that nothing else changed names the
    # records by the world's titles.
    other = app.js(
        "return [...document.querySelectorAll('[data-testid=grading-row]')]"
        ".find(r => r.textContent.includes('support-agent-v2')).dataset.episode"
    )
    app.clickable(f"[data-testid=grading-row][data-episode='{other}'] [data-testid=open-grading]").click()
    app.css("[data-screen=grade-run]")
    app.wait_count("[data-testid=criterion]", 14)
    changes = app.text_of(f"{criterion(app, 'nothing-else-changed')} [data-testid=evidence]")
    assert "changed that the task does not allow: " in changes and "Refunds RF" in changes, changes
    assert "refunds" not in changes and "should not have" not in changes, changes
    app.shot("44b-grade-run-changes")
    press(app, Keys.ESCAPE)
    app.css("[data-screen=grading]")

    # The scores dashboard: the good run passes, the one that refunded fails a gate.
    press(app, Keys.ESCAPE)
    app.css("[data-screen=home]")
    app.clickable("[data-testid=open-dashboard]").click()
    app.css("[data-screen=dashboard]")
    app.wait_text("[data-testid=dashboard-numbers]", "50%")
    numbers = app.text_of("[data-testid=dashboard-numbers]")
    assert "— · 0.50" in numbers, numbers
    for chart in ["chart-scores", "chart-pass-k", "chart-criteria"]:
        app.css(f"[data-testid={chart}]")
    app.shot("45-scores-dashboard")
