"""The rubric flow on a new world, contract review: a lawyer drafts the
rubric of "ask the client what data is involved" from the reference
solution, lints it, sees the survivor (the questions to the client could be
anything), adds a check in the advanced SQL view with completion and a
preview of what it reads, lints again to 100%, saves two versions and
compares them; the real command line agrees on the saved file."""

from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select
from test_rubric import cli_lint, lint, survivor_ids

WORLD = "contract-review"
TASK = "phi-offshore-info-request"
QUERY = "SELECT questions FROM info_requests WHERE id = 'IR-5001' AND status = 'open'"


def test_a_lawyer_drafts_tightens_and_saves_a_contract_review_rubric(launch, data_dir: Path):
    app = launch()
    app.css("[data-screen=home]")
    app.open_world(WORLD)
    app.clickable(f"[data-task='{TASK}'] [data-testid=open-rubric]").send_keys(Keys.ENTER)
    app.css("[data-screen=rubric]")
    app.css("[data-testid=criterion]")

    # Start from a draft of the reference solution.
    app.clickable("[data-testid=redraft]").click()
    app.wait_text("[data-testid=drafted-from]", "reference solution")
    drafted = len(app.all("[data-testid=criterion]"))
    sentences = [s.text for s in app.all("[data-testid=sentence]")]
    assert not any("SELECT" in s for s in sentences), sentences

    # Lint: it passes the threshold (90%), but one mutant survives: the
    # questions to the client replaced by words that ask nothing.
    result = lint(app)
    assert result.get_attribute("data-ok") == "true", app.text_of("[data-testid=lint-result]")
    survivors = app.all("[data-testid=survivor]")
    assert len(survivors) == 1, [s.text for s in survivors]
    (survivor,) = survivors
    assert "request_client_information" in survivor.text and "still" in survivor.text, survivor.text
    # It points at the criterion on the request, not the clause review's.
    assert survivor.get_attribute("data-criterion") == "info-requests-ir-5001"
    survivor_id = survivor.get_attribute("data-mutant")
    app.shot("36-contract-survivor")

    # Add a check in the advanced SQL view: the questions must ask about PHI.
    Select(app.css("[data-testid=add-criterion]")).select_by_value("state")
    editor = app.css("[data-testid=criterion-editor]")
    editor.find_element(By.CSS_SELECTOR, "input[name=state-mode][value=custom]").click()
    sql = app.clickable("[data-field=query] .cm-content")
    sql.click()
    # Completion from the world's schema: the tables are offered as typed.
    sql.send_keys("SELECT questions FROM info_")
    app.wait_text(".cm-tooltip-autocomplete", "info_requests")
    sql.send_keys(Keys.ESCAPE)
    sql.send_keys(Keys.CONTROL, "a")
    sql.send_keys(QUERY)
    app.wait(10).until(lambda d: d.find_element(By.CSS_SELECTOR, "[data-field=query] .cm-content").text == QUERY)
    # The preview reads the reference solution's final state.
    # (Read as text: a long cell is cut short on screen, its words are all there.)
    rows = "return document.querySelector('[data-testid=preview-rows]')?.textContent ?? ''"
    app.wait(20).until(lambda d: "identifiable patient data (PHI)" in d.execute_script(rows))
    assert "1 row" in app.text_of("[data-testid=preview-count]")
    expect = app.css("[data-field=expect] input")
    expect.send_keys('{"contains": "PHI"}')
    expect.send_keys(Keys.TAB)
    app.wait_count("[data-testid=criterion]", drafted + 1)
    app.shot("37-contract-sql")

    # Lint again: the survivor is caught, and nothing else gets through.
    result = lint(app)
    assert survivor_id not in survivor_ids(app)
    assert survivor_ids(app) == []
    assert result.get_attribute("data-ok") == "true", app.text_of("[data-testid=lint-result]")
    assert "100%" in result.text, result.text

    # Save version 1, make the new check worth 2 points, save version 2.
    app.clickable("[data-testid=save]").click()
    app.wait_text("[data-testid=saved]", "Saved as version 1")
    app.all("[data-testid=criterion]")[-1].send_keys(Keys.ENTER)
    points = app.css("[data-testid=criterion-editor] [data-field=points] input")
    points.send_keys(Keys.CONTROL, "a")
    points.send_keys("2")
    app.wait_text("[data-testid=save]", "Save as version 2")
    app.clickable("[data-testid=save]").click()
    app.wait_text("[data-testid=saved]", "Saved as version 2")

    # Compare the two versions: one criterion changed, in words.
    app.clickable("[data-testid=compare]").click()
    app.wait_text("[data-testid=comparison]", "From version 1 to version 2")
    changed = app.text_of("[data-testid=compare-changed]")
    assert "Worth 2 points, was 1" in changed, changed
    assert "0 added, 0 removed, 1 changed" in app.text_of("[data-testid=comparison]")
    app.shot("38-contract-compare")

    # The command line lints the saved file and agrees.
    saved = data_dir / "rubrics" / WORLD / f"{TASK}.toml"
    text = saved.read_text()
    assert QUERY in text and 'expect = { contains = "PHI" }' in text, text
    out = cli_lint(WORLD, saved.parent, TASK)
    assert f"ok   {TASK}" in out and "(100%)" in out, out
