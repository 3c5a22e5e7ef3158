"""An expert performs support-desk tasks through the real window; the store
must then hold exactly the trajectory they produced."""

import json
import sqlite3
import statistics
from pathlib import Path

from conftest import ARTIFACTS
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

TASK = "duplicate-charge"
REFUND_REASON = "Duplicate charge: March invoice was charged twice on March 1 (payment retry)"
HALF_WRITTEN = "Hi Claire, I can see the $50 goodwill refund; the rest"
LAST_WHY = "Claire asked for the rest back, so I told her the refunded total."
RATIONALE = "The invoice shows two payments of $79.00 for one $79.00 invoice, so one is a duplicate."
MESSAGE = (
    "Hi Dana, you're right: your March invoice (INV-24073) was charged twice. "
    "I've refunded the extra $79.00 to your Visa; it shows within 5-10 business days."
)


def store(data_dir: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(data_dir / "understudy.sqlite")
    conn.row_factory = sqlite3.Row
    return conn


def draft(conn: sqlite3.Connection, slot: str):
    """The text saved in a draft slot of the only open episode, or None."""
    row = conn.execute(
        "SELECT d.text FROM drafts d JOIN episodes e ON e.id = d.episode_id WHERE d.slot = ? AND e.status IN ('in_progress', 'paused')",
        (slot,),
    ).fetchone()
    conn.close()
    return row[0] if row else None


def trajectory(conn: sqlite3.Connection, episode_id: str):
    rows = conn.execute(
        "SELECT idx, action, observation, is_error, retracted, rationale, flag FROM steps WHERE episode_id = ? ORDER BY idx",
        (episode_id,),
    ).fetchall()
    return [
        {
            "action": json.loads(r["action"]),
            "ok": not r["is_error"],
            "error": (json.loads(r["observation"]).get("error") or {}).get("code"),
            "retracted": bool(r["retracted"]),
            "rationale": r["rationale"],
            "flag": r["flag"],
        }
        for r in rows
    ]


def test_expert_performs_a_support_task_and_the_exact_trajectory_is_stored(launch, data_dir):
    app = launch()
    app.css("[data-screen=home]")
    app.shot("01-home-first-run")
    app.create_profile()
    app.open_world("support-desk")
    app.wait_text(f"[data-task='{TASK}']", "Not started")
    app.shot("02-home")

    app.start_task(TASK)
    app.css("[data-testid=policy]")
    app.shot("03-workspace-policy")

    # Look the customer up by the email the customer gave.
    app.open_tool("look up", "lookup_customer")
    app.fill("lookup_customer", email="dana.whitfield@harborlight.io")
    app.run(1)
    app.wait_text("[data-testid=step-result]", "Harborlight Physio (C-1007)")

    app.open_tool("open ticket", "get_ticket")
    app.fill("get_ticket", ticket_id="T-1042")
    app.run(2)

    # Browse the invoices view: open it, search it, open one record.
    app.clickable("[data-view=invoices]").click()
    app.wait_count("[data-testid=timeline-entry]", 3)
    app.css("[data-testid=table-invoices] .vtable-row")
    app.type_into("[data-testid=records-search]", "Harborlight").send_keys(Keys.ENTER)
    app.wait_count("[data-testid=timeline-entry]", 4)
    app.clickable("[data-testid=table-invoices] [data-key='INV-24073']").click()
    app.wait_count("[data-testid=timeline-entry]", 5)
    app.wait_text("[data-testid=record-panel]", "158.00")
    app.shot("04-workspace-records")

    # A refund larger than what was paid: the guard refuses it, in plain words.
    app.open_tool("issue refund", "issue_refund")
    app.fill("issue_refund", invoice_id="INV-24073", amount="200", reason=REFUND_REASON, ticket_id="T-1042")
    app.run(6)
    error = app.text_of("[data-testid=step-error]")
    assert "The system refused this action" in error
    assert "You can't refund more than was paid" in error
    assert "at most $158.00 can still be refunded" in error
    app.shot("05-guard-refused")

    app.fill("issue_refund", amount="79")
    app.run(7)
    app.wait_text("[data-testid=step-result]", "of $79.00 issued on INV-24073")

    # Why I did this, on the refund step.
    app.show_timeline()
    why = app.all("[data-testid=rationale]")[-1]
    why.send_keys(RATIONALE)
    app.clickable("[data-testid=composer]").click()  # leaving the field saves it
    app.wait_text("[data-testid=timeline-entry]:last-child", "Saved")

    app.send_message(MESSAGE, 8)
    app.wait_text("[data-testid=thread]", "That's great, thank you for sorting it out so quickly!")

    app.open_tool("close", "close_ticket")
    app.fill("close_ticket", ticket_id="T-1042", resolution="Refunded duplicate March charge of $79.00 on INV-24073.")
    app.run(9)
    app.shot("06-workspace-done")

    # Submit: the review shows the state diff and the final message.
    app.clickable("[data-testid=submit]").click()
    app.css("[data-testid=review]")
    diff = app.text_of("[data-testid=diff]")
    assert "INV-24073" in diff and "RF-25001" in diff and "T-1042" in diff
    # Each table under the world's title for it (labels.toml), not its name.
    # (textContent: the screen shows the headings in capitals.)
    headings = {h.get_attribute("data-table"): h.get_attribute("textContent") for h in app.all("[data-testid=diff] h4")}
    assert headings.get("invoices") == "Invoices" and headings.get("refunds") == "Refunds", headings
    assert all(h != table and "_" not in h for table, h in headings.items()), headings
    assert app.text_of("[data-testid=final-message]") == MESSAGE
    app.shot("07-review")
    app.clickable("[data-testid=confirm-submit]").click()
    app.css("[data-testid=submitted]")
    # Progress in the world and the next task, so the expert goes on without the list.
    app.wait_text("[data-testid=world-progress]", "tasks done in")
    assert app.text_of("[data-testid=world-progress]").startswith("1 of ")
    app.css("[data-testid=next-task]")
    app.shot("08-submitted")

    runs = app.js("return (window.__understudyPerf || {runs: []}).runs")
    (ARTIFACTS / "run-latency-ms.json").write_text(json.dumps(runs))
    print(f"click Run -> result shown: median {statistics.median(runs):.1f} ms over {len(runs)} actions")

    app.clickable("[data-testid=back-to-tasks]").click()
    app.wait_text(f"[data-task='{TASK}']", "Done")

    # The store holds exactly what was done, in order.
    conn = store(data_dir)
    (episode,) = conn.execute("SELECT * FROM episodes").fetchall()
    assert episode["status"] == "submitted"
    assert episode["task_id"] == TASK and episode["world_id"] == "support-desk"
    assert episode["actor_kind"] == "expert"
    (expert,) = conn.execute("SELECT * FROM experts").fetchall()
    assert episode["actor_id"] == expert["id"]
    assert expert["name"] == "Renee Okafor" and expert["credentials_attested"] == 1
    assert episode["final_message"] == MESSAGE
    assert episode["active_ms"] > 0
    refund = {"invoice_id": "INV-24073", "reason": REFUND_REASON, "ticket_id": "T-1042"}
    expected = [
        ({"tool": "lookup_customer", "args": {"email": "dana.whitfield@harborlight.io"}}, True, None),
        ({"tool": "get_ticket", "args": {"ticket_id": "T-1042"}}, True, None),
        ({"tool": "view_invoices", "args": {"limit": 200}}, True, None),
        ({"tool": "view_invoices", "args": {"limit": 200, "search": "Harborlight"}}, True, None),
        ({"tool": "view_invoices", "args": {"key": "INV-24073"}}, True, None),
        ({"tool": "issue_refund", "args": {**refund, "amount": 200}}, False, "guard_failed"),
        ({"tool": "issue_refund", "args": {**refund, "amount": 79}}, True, None),
        ({"message": MESSAGE}, True, None),
        (
            {
                "tool": "close_ticket",
                "args": {"ticket_id": "T-1042", "resolution": "Refunded duplicate March charge of $79.00 on INV-24073."},
            },
            True,
            None,
        ),
    ]
    got = trajectory(conn, episode["id"])
    assert [(s["action"], s["ok"], s["error"]) for s in got] == expected
    assert [s["rationale"] for s in got] == [None] * 6 + [RATIONALE, None, None]
    assert not any(s["retracted"] or s["flag"] for s in got)


def test_killed_mid_episode_the_app_reopens_it_exactly_and_it_can_be_finished(launch, data_dir):
    app = launch()
    app.create_profile(name="Hugo Brandt", domain="Billing operations", credentials="CPA")
    app.start_task("partial-refund-remaining")
    app.open_tool("open ticket", "get_ticket")
    app.fill("get_ticket", ticket_id="T-1046")
    app.run(1)
    app.open_tool("look up", "lookup_customer")
    app.fill("lookup_customer", customer_id="C-1099")
    app.run(2)
    assert "No customer found with id C-1099" in app.text_of("[data-testid=step-error]")
    # A wrong look-up, undone: kept in the log, marked retracted.
    app.clickable("[data-testid=undo]").click()
    app.wait_text("[data-testid=timeline]", "Undone")
    app.fill("lookup_customer", customer_id="C-1035")
    app.run(3)
    # A half-written message: saved as it is typed, so the kill loses none of it.
    app.type_into("[data-testid=composer]", HALF_WRITTEN)
    app.wait(5).until(lambda d: draft(store(data_dir), "message") == HALF_WRITTEN)
    app.shot("09-before-kill")

    app.kill()

    app = launch()
    app.css("[data-testid=resume-list]")
    app.shot("10-home-resume")
    app.clickable("[data-testid=resume-list] button.btn-primary").click()
    app.css("[data-screen=workspace]")
    app.show_timeline()
    app.wait_count("[data-testid=timeline-entry]", 3)
    assert "Undone" in app.all("[data-testid=timeline-entry]")[1].text
    assert app.css("[data-testid=composer]").get_attribute("value") == HALF_WRITTEN
    app.shot("11-resumed")

    app.clickable("[data-testid=pause]").click()
    app.css("[data-testid=paused]")
    app.shot("12-paused")
    app.clickable("[data-testid=paused] button").click()
    app.wait_text("[data-testid=status]", "Recording")

    app.open_tool("issue refund", "issue_refund")
    app.fill(
        "issue_refund",
        invoice_id="INV-24048",
        amount="100",
        reason="Onboarding session never delivered; refunding the balance after the $50 goodwill refund",
        ticket_id="T-1046",
    )
    app.run(4)
    app.wait_text("[data-testid=step-result]", "of $100.00 issued on INV-24048")
    # Undo the refund, then redo it by keyboard (Ctrl+Shift+Z): the refund
    # stands, and both the undo and the redo are events of the episode.
    app.clickable("[data-testid=undo]").click()
    app.css("[data-testid=redo]")
    app.wait_text("[data-testid=timeline-entry]:last-child", "Undone")
    app.shot("12b-redo-offered")
    app.driver.execute_script("document.activeElement && document.activeElement.blur()")
    ActionChains(app.driver).key_down(Keys.CONTROL).key_down(Keys.SHIFT).send_keys("z").key_up(Keys.SHIFT).key_up(
        Keys.CONTROL
    ).perform()
    app.wait(10).until(lambda d: not d.find_elements("css selector", "[data-testid=redo]"))
    # The refund is taken again as a new step; the undone one stays, marked.
    app.wait_count("[data-testid=timeline-entry]", 5)
    assert "Undone" not in app.all("[data-testid=timeline-entry]")[-1].text
    assert "Undone" in app.all("[data-testid=timeline-entry]")[-2].text
    app.send_message("Hi Claire, I've refunded the remaining $100.00, so you have the full $150.00 back.", 6)

    # Keyboard only from here: Ctrl+J opens the last step's why, Ctrl+S the
    # review (focus on Submit, not Close), Ctrl+Enter submits.
    app.keys(Keys.CONTROL, "j")
    app.wait(5).until(lambda d: d.execute_script("return document.activeElement.dataset.testid") == "rationale")
    ActionChains(app.driver).send_keys(LAST_WHY).perform()
    app.keys(Keys.CONTROL, "s")
    app.wait_text("[data-testid=timeline-entry]:last-child", "Saved")
    app.css("[data-testid=review]")
    app.wait(5).until(lambda d: d.execute_script("return document.activeElement.dataset.testid") == "confirm-submit")
    app.keys(Keys.CONTROL, Keys.ENTER)
    app.css("[data-testid=submitted]")

    conn = store(data_dir)
    (episode,) = conn.execute("SELECT * FROM episodes").fetchall()
    assert episode["status"] == "submitted"
    got = trajectory(conn, episode["id"])
    assert [(s["action"].get("tool", "message"), s["ok"], s["retracted"]) for s in got] == [
        ("get_ticket", True, False),
        ("lookup_customer", False, True),
        ("lookup_customer", True, False),
        ("issue_refund", True, True),
        ("issue_refund", True, False),
        ("message", True, False),
    ]
    assert got[2]["action"]["args"] == {"customer_id": "C-1035"}
    assert got[4]["action"] == got[3]["action"], "the redo takes the undone refund again"
    assert got[5]["rationale"] == LAST_WHY
    # How the work went is in the record too: opened by this app (before and
    # after the kill), the undo, the pause and resume, the why written.
    events = conn.execute(
        "SELECT kind, detail FROM episode_events WHERE episode_id = ? ORDER BY id", (episode["id"],)
    ).fetchall()
    kinds = [e["kind"] for e in events]
    assert kinds.count("opened") >= 2, kinds
    assert json.loads(events[0]["detail"])["client"].startswith("understudy-app ")
    assert "undone" in kinds and kinds.index("paused") < kinds.index("resumed"), kinds
    assert kinds.count("undone") == 2 and kinds.count("redone") == 1, kinds
    (redone,) = [json.loads(e["detail"]) for e in events if e["kind"] == "redone"]
    assert redone == {"step": 4, "of": 3, "steps": 5}, redone
    assert kinds.index("redone") > len(kinds) - 1 - kinds[::-1].index("undone"), kinds
    assert "annotated" in kinds, kinds
    # The sent message is no longer a draft.
    (left,) = conn.execute(
        "SELECT count(*) FROM drafts WHERE episode_id = ? AND slot = 'message'", (episode["id"],)
    ).fetchone()
    assert left == 0


ASK_ZIP = "Hi Priya, before I change the plan: could you confirm the billing ZIP code on the account?"


def test_the_expert_learns_what_the_customer_knows_only_by_asking(launch, data_dir):
    """The customer's ZIP and card are nowhere in the window until the expert
    asks; the question and the answer are then both in the trajectory."""
    app = launch()
    app.create_profile()
    app.start_task("upgrade-with-verification")
    assert "Priya Raman, Lumen Yoga Studios" in app.text_of("#conv-title")
    page = app.driver.page_source
    assert "78702" not in page and "6158" not in page, "the customer's secrets reached the window"
    assert "can tell you" not in app.text_of("[data-testid=brief]")

    app.send_message("Thanks Priya, happy to help with that.", 1)
    app.wait_text("[data-testid=thread]", "Sorry, what do you need from me?")
    assert "78702" not in app.driver.page_source, "a message that asks nothing reveals nothing"

    app.send_message(ASK_ZIP, 2)
    app.wait_text("[data-testid=thread]", "Sure — our billing ZIP code is 78702.")
    app.shot("12-asked-the-customer")

    conn = store(data_dir)
    (episode,) = conn.execute("SELECT id FROM episodes").fetchall()
    rows = conn.execute(
        "SELECT action, observation FROM steps WHERE episode_id = ? ORDER BY idx", (episode["id"],)
    ).fetchall()
    conn.close()
    said = [(json.loads(r["action"])["message"], json.loads(r["observation"])["text"]) for r in rows]
    assert said == [
        ("Thanks Priya, happy to help with that.", "Sorry, what do you need from me?"),
        (ASK_ZIP, "Sure — our billing ZIP code is 78702."),
    ]
