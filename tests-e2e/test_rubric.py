"""An annotator takes a support-desk task's rubric from a draft to one that
passes lint, entirely in the window; the real command-line binary then
lints the saved file and agrees."""

import os
import sqlite3
import re
import subprocess
from pathlib import Path

from conftest import ROOT
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

WORLD = "support-desk"
TASK = "duplicate-charge"


def cli() -> str:
    """The command-line binary of this checkout (built if it is not yet)."""
    path = Path(os.environ.get("UNDERSTUDY_CLI", str(ROOT / "target" / "debug" / "understudy")))
    if not path.exists():
        subprocess.run(["cargo", "build", "-p", "understudy-cli", "--locked"], cwd=ROOT, check=True, timeout=1800)
    return str(path)


def cli_lint(world: str, rubrics: Path, task: str) -> str:
    """`understudy rubric lint` on a folder of saved rubrics; its output, once it passed."""
    out = subprocess.run(
        [cli(), "rubric", "lint", "--world", str(ROOT / "fixtures" / "worlds" / world), "--rubrics", str(rubrics), "--task", task],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def lint(app):
    """Runs lint from the window and waits for its result."""
    app.clickable("[data-testid=lint]").click()
    app.css("[data-testid=lint-progress][data-done=true]", timeout=30)
    return app.css("[data-testid=lint-result]")


def survivor_ids(app) -> list[str]:
    return [s.get_attribute("data-mutant") for s in app.all("[data-testid=survivor]")]


def build_record_check(app, table: str, record: str, field: str, words: str):
    """Turns the open criterion into "the record's field mentions these words"."""
    editor = app.css("[data-testid=criterion-editor]")
    editor.find_element(By.CSS_SELECTOR, "input[name=state-mode][value=record]").click()
    field_el = lambda name, tag: editor.find_element(By.CSS_SELECTOR, f"[data-field={name}] {tag}")
    Select(field_el("query", "select")).select_by_value(table)
    box = field_el("record", "input")
    box.clear()
    box.send_keys(record)
    Select(field_el("field", "select")).select_by_value(field)
    value = field_el("expect", "input")
    value.clear()
    value.send_keys(words)
    Select(field_el("compare", "select")).select_by_value("contains")


def test_annotator_drafts_lints_tightens_and_saves_a_rubric(launch, data_dir: Path):
    app = launch()
    app.css("[data-screen=home]")
    app.open_world(WORLD)
    # Keyboard-reachable from the task list: Tab from the task's row reaches "Rubric".
    rubric = app.clickable(f"[data-task='{TASK}'] [data-testid=open-rubric]")
    assert rubric.get_attribute("aria-label").startswith("Rubric: ")
    rubric.send_keys(Keys.ENTER)
    app.css("[data-screen=rubric]")

    # The world's own rubric, as sentences with points, gates and penalties.
    app.wait_count("[data-testid=criterion]", 13)
    sentences = [s.text for s in app.all("[data-testid=sentence]")]
    assert "Tells the customer the exact amount refunded, $79.00." in sentences
    points = [p.text for p in app.all("[data-testid=points]")]
    assert "+4 points" in points and "penalty −3" in points
    assert "As the world ships it" in app.text_of("[data-testid=rubric-state]")
    app.shot("30-rubric")

    # Start again from a draft made from a gold run (no approved run yet:
    # the reference solution, and the window says so).
    app.clickable("[data-testid=redraft]").click()
    app.wait_text("[data-testid=drafted-from]", "reference solution (no approved run of this task yet)")
    sentences = [s.text for s in app.all("[data-testid=sentence]")]
    assert "The customer is told $79.00, and no other amount" in sentences, sentences
    assert "Nothing about another customer is disclosed" in sentences
    assert not any("SELECT" in s for s in sentences)
    app.shot("31-draft")

    # Lint: a progress bar, then the result. The draft pins the figures gold
    # wrote in notes (the resolution's $79.00 on INV-24073) but leaves their
    # wording open, so it passes at 91% with one survivor: a refund with a
    # meaningless reason gets through.
    # How long it takes is measured by `cargo bench --bench lint`, not here.
    result = lint(app)
    assert app.js("return window.__understudyLint.events") > 3, "progress streamed run by run"
    done = app.text_of("[data-testid=lint-progress]")
    assert re.search(r" in \d+(\.\d+)? s$", done), f"the bar ends by saying how long it took: {done!r}"
    app.shot("32-lint-progress")
    assert result.get_attribute("data-ok") == "true", app.text_of("[data-testid=lint-result]")
    reason = next(s for s in app.all("[data-testid=survivor]") if "(issue_refund) with" in s.text)
    assert "instead of reason" in reason.text and "still passes" in reason.text, reason.text
    reason_id = reason.get_attribute("data-mutant")
    assert reason.get_attribute("data-criterion") == "refunds-rf-25001"
    app.shot("33-survivor")

    # One keypress opens the criterion that should have caught it; tighten
    # it: the refund's reason must mention a duplicate.
    reason.send_keys(Keys.ENTER)
    editor = app.css("[data-testid=criterion-editor]")
    assert "Refund RF-25001" in editor.text
    build_record_check(app, "refunds", "RF-25001", "reason", "duplicate")
    app.wait_text("[data-testid=criterion].selected [data-testid=sentence]", "Refund RF-25001: its reason mentions “duplicate”")

    result = lint(app)
    assert reason_id not in survivor_ids(app), "the tightened criterion catches it"
    assert result.get_attribute("data-ok") == "true", app.text_of("[data-testid=lint-result]")
    assert survivor_ids(app) == []

    # Try it on the reference solution: each criterion with its evidence.
    app.clickable("[data-testid=try]").click()
    app.wait_text("[data-testid=try-result]", "scores 1.0 and passes")
    assert len(app.all("[data-testid=try-criterion]")) == len(app.all("[data-testid=criterion]"))

    # Save as a version: the canonical file in the app's rubric folder.
    app.clickable("[data-testid=save]").click()
    app.wait_text("[data-testid=saved]", "Saved as version 1")
    app.shot("34-saved")
    saved = data_dir / "rubrics" / WORLD / f"{TASK}.toml"
    assert saved.is_file()
    text = saved.read_text()
    assert 'task = "duplicate-charge"' in text and 'expect = { contains = "duplicate" }' in text
    conn = sqlite3.connect(data_dir / "understudy.sqlite")
    (row,) = conn.execute("SELECT version, hash, content FROM rubric_versions WHERE task_id = ?", (TASK,)).fetchall()
    assert row[0] == "1" and row[2] == text
    conn.close()

    # The real command line lints the saved file and agrees: it passes.
    out = cli_lint(WORLD, saved.parent, TASK)
    assert f"ok   {TASK}" in out, out
    assert "passed 1/1 task(s)" in out, out

    # Reopening shows the saved version, not the world's file.
    app.clickable("[data-testid=rubric-back]").click()
    app.open_world(WORLD)
    app.clickable(f"[data-task='{TASK}'] [data-testid=open-rubric]").click()
    app.wait_text("[data-testid=rubric-state]", "Your saved version")
    assert "Version 1" in app.text_of("[data-testid=versions]")


def test_a_criterion_that_does_not_compile_is_shown_at_its_field_and_nothing_is_saved(launch, data_dir: Path):
    app = launch()
    app.open_world(WORLD)
    app.clickable(f"[data-task='{TASK}'] [data-testid=open-rubric]").click()
    app.wait_count("[data-testid=criterion]", 13)
    first = app.all("[data-testid=criterion]")[0]
    first.send_keys(Keys.ENTER)
    editor = app.css("[data-testid=criterion-editor]")
    # The advanced SQL view is a code editor: select all, then type over it.
    sql = editor.find_element(By.CSS_SELECTOR, "[data-field=query] .cm-content")
    sql.click()
    sql.send_keys(Keys.CONTROL, "a")
    sql.send_keys("SELECT count(*) FROM nowhere")
    # Checked as it is typed: wait for the check of the whole query, not a prefix's.
    app.wait_text("[data-field=query] [data-testid=field-problem]", "no such table: nowhere")
    assert "cannot be run on the world's records" in app.text_of("[data-field=query] [data-testid=field-problem]")
    # The preview says the same in plain words, at the field.
    app.wait_text("[data-testid=preview-problem]", "There is no table “nowhere” in this world's records")
    app.shot("35-rubric-sql-problem")
    assert app.css("[data-testid=lint]").get_attribute("disabled") is not None
    assert app.css("[data-testid=save]").get_attribute("disabled") is not None
    assert not (data_dir / "rubrics").exists()
