"""A reviewer approves one recording and returns another with a comment in
the real window; the store holds both decisions, and the expert sees the
returned one on its task. The replay view steps with the keyboard and
compares the two runs."""

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from test_capture import store

TASK = "duplicate-charge"
WHY = "Two payments of $79.00 for one invoice: one is a duplicate."
COMMENT = "Refund the duplicate payment before you reply to the customer."


def record(app, refund: bool):
    """One attempt at the duplicate-charge task, submitted."""
    app.start_task(TASK)
    app.open_tool("look up", "lookup_customer")
    app.fill("lookup_customer", email="dana.whitfield@harborlight.io")
    app.run(1)
    steps = 1
    if refund:
        app.open_tool("issue refund", "issue_refund")
        app.fill(
            "issue_refund",
            invoice_id="INV-24073",
            amount="79",
            reason="Duplicate charge on the March invoice",
            ticket_id="T-1042",
        )
        app.run(2)
        app.wait_text("[data-testid=step-result]", "of $79.00 issued on INV-24073")
        app.show_timeline()
        app.all("[data-testid=rationale]")[-1].send_keys(WHY)
        app.clickable("[data-testid=composer]").click()  # leaving the field saves it
        app.wait_text("[data-testid=timeline-entry]:last-child", "Saved")
        steps = 2
    app.send_message("Hi Dana, I've looked into the March charge for you.", steps + 1)
    app.clickable("[data-testid=submit]").click()
    app.css("[data-testid=review]")
    app.clickable("[data-testid=confirm-submit]").click()
    app.css("[data-testid=submitted]")
    app.clickable("[data-testid=back-to-tasks]").click()
    app.css("[data-screen=home]")


def press(app, *keys):
    ActionChains(app.driver).send_keys(*keys).perform()


def position(app) -> str:
    return app.text_of("[data-testid=step-position]")


def test_a_reviewer_approves_one_recording_returns_another_and_the_expert_gets_it_back(launch, data_dir):
    app = launch()
    app.create_profile(name="Renee Okafor")
    record(app, refund=True)
    record(app, refund=False)
    conn = store(data_dir)
    good, thin = [r["id"] for r in conn.execute("SELECT id FROM episodes ORDER BY created_at, id")]
    conn.close()

    # A second expert reviews: a new profile on this machine.
    app.clickable("[data-testid=expert-profile] button.btn-ghost").click()
    app.create_profile(name="Lee Park", domain="Support quality", credentials="Reviews support work")
    app.clickable("[data-testid=open-review]").click()
    app.css("[data-screen=queue]")
    app.wait_count("[data-testid=queue-row]", 2)
    assert app.text_of("[data-testid=reviewer]") == "Lee Park"
    assert "2 recordings waiting for review" in app.text_of("#queue-title + p")
    app.shot("20-review-queue")

    # Before deciding, where the two runs part: the refund, field by field.
    app.clickable("[data-testid=open-consensus]").click()
    app.wait_text("[data-testid=consensus-summary]", "2 runs (Renee Okafor, Renee Okafor): the same final value on")
    differs = app.all("[data-testid=consensus-fields] tr[data-agreed=false]")
    assert differs and any("INV-24073" in r.text for r in differs), [r.text for r in differs]
    # Tool calls by the tools' titles, never their names.
    calls = app.text_of("[data-testid=consensus-actions]")
    assert "issue_refund" not in calls and "get_ticket" not in calls, calls
    refund_row = [r.text for r in app.all("[data-testid=consensus-actions] tr[data-agreed=false]") if "Issue refund" in r.text]
    assert refund_row and refund_row[0].replace(" ", "").endswith("✓—"), refund_row
    app.shot("20b-review-consensus")
    app.clickable("[data-testid=consensus] button").click()

    # The replay view of the good run, stepped through with the keyboard.
    app.clickable(f"[data-episode='{good}'] [data-testid=open-replay]").click()
    app.css("[data-screen=replay]")
    app.wait_count("[data-testid=replay-step]", 3)
    assert position(app) == "Step 1 of 3"
    app.wait_text("[data-testid=replay-state]", "Nothing in the company's records had changed")
    press(app, "j")
    app.wait_text("[data-testid=step-position]", "Step 2 of 3")
    app.wait_text("[data-testid=step-detail]", WHY)
    app.wait_text("[data-testid=replay-diff]", "INV-24073")
    assert "79.00" in app.text_of("[data-testid=replay-diff]")
    press(app, Keys.END)
    app.wait_text("[data-testid=step-position]", "Step 3 of 3")
    assert "Message to the customer" in app.text_of("[data-testid=step-detail]")
    press(app, Keys.HOME)
    app.wait_text("[data-testid=step-position]", "Step 1 of 3")
    press(app, Keys.ARROW_DOWN)
    app.wait_text("[data-testid=step-position]", "Step 2 of 3")
    app.shot("21-replay")

    # Approve from the replay view: Ctrl+Enter confirms.
    app.clickable("[data-testid=approve]").click()
    app.css("[data-testid=decision]")
    app.keys(Keys.CONTROL, Keys.ENTER)
    app.wait_text(".ws-title", "Approved")

    # Compare with the other run of the same task.
    Select(app.clickable("[data-testid=compare-select]")).select_by_value(thin)
    app.css("[data-testid=compare]")
    app.wait_count("[data-testid=compare-row]", 3)
    assert "of 3 steps differ" in app.text_of("[data-testid=compare-summary]")
    assert "INV-24073" in app.text_of("[data-testid=compare-left-state]")
    app.shot("22-compare")

    # Back in the queue, return the other one: not without a comment.
    press(app, Keys.ESCAPE)
    app.css("[data-testid=scrubber]")
    press(app, Keys.ESCAPE)
    app.css("[data-screen=queue]")
    app.wait_count("[data-testid=queue-row]", 1)
    app.clickable(f"[data-episode='{thin}'] [data-testid=reject]").click()
    app.css("[data-testid=decision]")
    app.clickable("[data-testid=confirm-decision]").click()
    app.wait_text("[data-testid=decision-error]", "Write what the expert should change")
    app.type_into("[data-testid=decision-comment]", COMMENT)
    app.keys(Keys.CONTROL, Keys.ENTER)
    app.wait_count("[data-testid=queue-row]", 0)
    Select(app.clickable("[data-testid=filter-status]")).select_by_value("all")
    app.wait_count("[data-testid=queue-row]", 2)
    assert app.css(f"[data-episode='{good}']").get_attribute("data-status") == "approved"
    assert app.css(f"[data-episode='{thin}']").get_attribute("data-status") == "rejected"
    assert COMMENT in app.text_of(f"[data-episode='{thin}'] [data-testid=last-review]")

    # The store holds both decisions, under the reviewer's name.
    conn = store(data_dir)
    reviews = conn.execute("SELECT episode_id, reviewer, decision, comment FROM reviews ORDER BY id").fetchall()
    assert [tuple(r) for r in reviews] == [
        (good, "Lee Park", "approve", ""),
        (thin, "Lee Park", "reject", COMMENT),
    ]
    statuses = dict(conn.execute("SELECT id, status FROM episodes").fetchall())
    assert statuses == {good: "approved", thin: "rejected"}
    conn.close()

    # Renee gets the returned one back on its task, with the comment.
    app.clickable("[data-testid=back-home]").click()
    app.css("[data-screen=home]")
    Select(app.clickable("select[aria-label='Switch expert']")).select_by_visible_text("Renee Okafor")
    app.wait_text("[data-testid=expert-profile]", "Renee Okafor")
    app.open_world("support-desk")
    app.wait_text(f"[data-task='{TASK}'] [data-testid=returned]", f"Returned by Lee Park: “{COMMENT}”")
    assert app.text_of(f"[data-task='{TASK}'] button.task-open") == "Try again"
    app.shot("23-returned")

    # She can start a new attempt from there.
    app.clickable(f"[data-task='{TASK}'] button.task-open").click()
    app.css("[data-screen=workspace]")
