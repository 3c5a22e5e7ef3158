"""A lead exports datasets from the export dialog in the real window and
loads them: training rows of the runs waiting for review, typed into the
destination field, and a dataset folder saved through the system's own
save dialog. Each must be byte for byte what `understudy export` writes for
the same filters. The scores screen shows how a judge command agrees with a
person on the judged criterion, and the progress screen shows who did what.

The save dialog is the system's (GTK) window, outside the page WebDriver
drives: the test types the location into it through the X server
(xdotool), as test_grading.py does for the open dialog. The destination
field of the export dialog also takes a typed location, which is how the
first export is made."""

import json
import subprocess
import time
from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from conftest import ARTIFACTS, ROOT
from test_capture import store
from test_rubric import cli

RUNS = Path(__file__).resolve().parent / "data" / "agent-runs.jsonl"
WORLDS = ROOT / "fixtures" / "worlds"
WORLD = "support-desk"
TASK = "cancel-no-refund"
JUDGED = "kind-and-clear"


def understudy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([cli(), *args], capture_output=True, text=True, timeout=120, check=True)


def save_in_system_dialog(title: str, path: Path, shot: str | None = None):
    """Types `path` into the system's save dialog (GTK) and presses Enter:
    its name field takes a full location."""

    def xdotool(*args: str) -> str:
        return subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=20, check=True).stdout

    window = xdotool("search", "--sync", "--onlyvisible", "--name", title).split()[0]
    xdotool("windowfocus", "--sync", window)
    time.sleep(0.3)
    if shot:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        subprocess.run(["import", "-window", "root", str(ARTIFACTS / f"{shot}.png")], check=True, timeout=20)
    xdotool("key", "--clearmodifiers", "ctrl+a")
    xdotool("type", "--delay", "5", str(path))
    time.sleep(0.3)
    xdotool("key", "Return")


def press(app, *keys):
    ActionChains(app.driver).send_keys(*keys).perform()


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def open_export(app):
    app.clickable("[data-testid=open-export-home]").click()
    app.css("[data-testid=export-dialog]")
    app.wait().until(lambda d: len(app.all("[data-testid^=export-format-]")) == 4)


def test_export_dialog_writes_what_the_command_line_writes(launch, data_dir: Path, tmp_path: Path):
    # Two agent runs waiting for review, and grades of the judged criterion:
    # a judge command's and a person's, both from the command line.
    db = data_dir / "understudy.sqlite"
    understudy("import", "--store", str(db), "--input", str(RUNS), "--worlds", str(WORLDS))
    conn = store(data_dir)
    runs = [r[0] for r in conn.execute("SELECT id FROM episodes ORDER BY id")]
    conn.close()
    assert len(runs) == 2
    for run, judge_met, person_met in [(runs[0], "true", "true"), (runs[1], "false", "true")]:
        for who, met in [("command:tone-judge", judge_met), ("lee", person_met)]:
            understudy(
                "rubric", "judge", "--world", str(WORLDS / WORLD), "--store", str(db), "--episode", run,
                "--criterion", JUDGED, "--met", met, "--reason", f"{who} read the reply", "--judge", who,
            )

    app = launch()
    app.create_profile(name="Lee Park", domain="Support operations", credentials="Leads the support team")
    # Lee's own recording of the task, handed in (imported, as from a
    # colleague's machine): 25 minutes of work.
    conn = store(data_dir)
    lee = conn.execute("SELECT id FROM experts WHERE name = 'Lee Park'").fetchone()[0]
    conn.close()
    line = json.loads(RUNS.read_text().splitlines()[0])
    line["episode"].update(id="0190aaaa-0000-7000-8000-000000000001", actor={"kind": "expert", "id": lee}, active_ms=1_500_000)
    line["expert"] = None
    mine = tmp_path / "lee.jsonl"
    mine.write_text(json.dumps(line) + "\n")
    understudy("import", "--store", str(db), "--input", str(mine), "--worlds", str(WORLDS))

    # The dialog opens on gold only: nothing is approved yet.
    open_export(app)
    app.wait_text("[data-testid=export-count]", "0 recordings match")
    assert app.css("[data-testid=export-format-trl]").is_selected()
    app.shot("50-export-dialog")

    # Training rows of the runs waiting for review, for one task.
    Select(app.css("[data-testid=export-status]")).select_by_value("submitted")
    Select(app.css("[data-testid=export-world]")).select_by_value(WORLD)
    Select(app.css("[data-testid=export-task]")).select_by_value(f"{WORLD}/{TASK}")
    app.wait_text("[data-testid=export-count]", "3 recordings match")
    Select(app.css("[data-testid=export-expert]")).select_by_visible_text("Lee Park")
    app.wait_text("[data-testid=export-count]", "1 recording matches")
    Select(app.css("[data-testid=export-expert]")).select_by_value("")
    app.wait_text("[data-testid=export-count]", "3 recordings match")
    trl = tmp_path / "waiting.jsonl"
    app.type_into("[data-testid=export-destination]", str(trl))
    app.keys(Keys.CONTROL, Keys.ENTER)
    app.wait_text("[data-testid=export-done]", "Exported 3 recordings")
    assert str(trl) in app.text_of("[data-testid=export-path]")
    app.shot("51-export-done")
    by_cli = tmp_path / "cli-waiting.jsonl"
    understudy(
        "export", "--store", str(db), "--worlds", str(WORLDS), "--format", "trl", "--status", "submitted",
        "--world", WORLD, "--task", TASK, "--output", str(by_cli),
    )
    assert trl.read_bytes() == by_cli.read_bytes(), "the window's export differs from the command line's"
    # Loaded back: one conversation per run, ending on the assistant.
    rows = [json.loads(line) for line in trl.read_text().splitlines()]
    assert len(rows) == 3
    assert all(r["messages"][-1]["role"] == "assistant" and r["tools"] for r in rows)

    # A dataset folder of everything, saved through the system's dialog.
    app.clickable("[data-testid=export-format-folder]").click()
    Select(app.css("[data-testid=export-status]")).select_by_value("")
    Select(app.css("[data-testid=export-world]")).select_by_value("")
    app.wait_text("[data-testid=export-count]", "3 recordings match")
    folder = tmp_path / "dataset"
    app.clickable("[data-testid=export-choose]").click()
    save_in_system_dialog("Save the dataset folder as", folder, shot="52-export-save-dialog")
    app.wait().until(lambda d: app.css("[data-testid=export-destination]").get_attribute("value") == str(folder))
    app.clickable("[data-testid=export-run]").click()
    app.wait_text("[data-testid=export-done]", "Exported 3 recordings")
    assert "files in the folder" in app.text_of("[data-testid=export-done]")
    by_cli = tmp_path / "cli-dataset"
    understudy("export", "--store", str(db), "--worlds", str(WORLDS), "--format", "folder", "--output", str(by_cli))
    mine, theirs = files_of(folder), files_of(by_cli)
    assert "meta/info.json" in mine and "README.md" in mine, sorted(mine)
    assert mine == theirs, "the window's dataset folder differs from the command line's"

    # A refusal in plain words: a place that does not exist.
    app.clickable("[data-testid=export-format-native]").click()
    app.type_into("[data-testid=export-destination]", "/no/such/folder/backup.jsonl")
    app.clickable("[data-testid=export-run]").click()
    app.wait_text("[data-testid=export-dialog] [role=alert]", "does not exist")
    app.shot("53-export-refused")
    press(app, Keys.ESCAPE)
    app.wait().until(lambda d: not app.all("[data-testid=export-dialog]"))

    # The scores: the judge and the person agree on one run of two.
    assert app.css("[data-screen=dashboard]")
    app.css("[data-testid=dashboard-judge]")
    app.wait_text("[data-testid=dashboard-judge] [data-testid=judge-agreed]", "Agreed on 1 of 2 grades (50%)")
    assert "tone-judge" in app.text_of("[data-testid=dashboard-judge]")
    # Which way the judge leans: it said not met where the person said met.
    differences = [d.text for d in app.all("[data-testid=dashboard-judge] [data-testid=judge-difference]")]
    assert len(differences) == 1, differences
    assert "The judge said not met, a person said met" in differences[0] and "1 grade" in differences[0], differences
    app.js("document.querySelector('[data-testid=dashboard-judge]').scrollIntoView()")
    app.shot("54-scores-judge-agreement")
    # Gold and the experts' time per task, drawn for every task with runs.
    app.css("[data-testid=chart-gold]")
    app.css("[data-testid=chart-expert-time]")
    app.js("document.querySelector('#effort-title').scrollIntoView()")
    assert "Gold and expert time, per task" in app.text_of("[data-screen=dashboard]")
    app.shot("56-gold-and-expert-time")

    # Progress: Lee's recording waits for review (agents' runs are not an
    # expert's work), 25 minutes spent; as a reviewer Lee has nothing of
    # anyone else's to review.
    press(app, Keys.ESCAPE)
    app.clickable("[data-testid=open-progress]").click()
    app.css("[data-screen=progress]")
    app.wait_count("[data-testid=expert-row]", 1)
    row = app.css("[data-testid=expert-row]")
    assert row.get_attribute("data-me") == "true"
    assert app.text_of("[data-testid=expert-row] [data-testid=expert-done]") == "1"
    assert app.text_of("[data-testid=expert-row] [data-testid=expert-approved]") == "0"
    assert "25 min" in row.text and "You" in row.text
    app.wait_text("[data-testid=reviewer-row]", "Lee Park")
    assert app.text_of("[data-testid=reviewer-row] [data-testid=reviewer-reviewed]") == "0"
    assert app.text_of("[data-testid=reviewer-row] [data-testid=reviewer-pending]") == "0"
    app.css("[data-testid=chart-recordings]")
    app.shot("55-progress")
