"""An expert performs a τ-bench airline task in the real window: what the
customer wants and who they are come only from asking, the customer's
profile from the Records panel's expert-only list, and the compensation
from τ-bench's own tool. Every look and act is a stored step."""

import json


from test_capture import store

TASK = "test-16"
ASK_HELP = "Hello, thanks for contacting us. How can I help you today?"
ASK_ID = "I'm sorry about the delay. Could you give me your user id so I can look at your booking?"
REQUEST = "I am contacting to complain about my delayed flight HAT039 from ATL to SEA."
USER_ID = "My user id is ethan_martin_2396."
CLOSING = "I've sent you a $150 certificate for the delay. I'm sorry again for the trouble."
THANKS = "No, that's everything. Thank you for your help!"


def test_an_expert_performs_a_tau_airline_task_by_asking_the_customer(launch, data_dir):
    app = launch()
    app.create_profile(name="Maya Ortiz", domain="Airline customer service", credentials="6 years at an airline contact centre")

    # The task list says what the customer wants, not the brief every τ task shares.
    app.open_world("tau-airline")
    row = app.css(f"[data-task='{TASK}']")
    app.js("arguments[0].scrollIntoView({block: 'center'})", row)
    summary = app.js("return arguments[0].querySelector('.task-instruction').textContent", row)
    assert summary == "I am contacting to complain about my delayed flight HAT039 from ATL to SEA.", summary
    app.shot("30-tau-airline-tasks")

    app.start_task(TASK, world_id="tau-airline")
    assert "Ethan Martin" in app.text_of("#conv-title")
    page = app.driver.page_source
    assert "reactive" not in page and "ethan_martin_2396" not in page and "HAT039" not in page, "the scenario reached the window"
    tabs = [t.text for t in app.all("[data-testid=records] [role=tab]")]
    assert tabs == ["Customers", "Reservations", "Flights"], tabs

    app.send_message(ASK_HELP, 1)
    app.wait_text("[data-testid=thread]", REQUEST)
    app.send_message(ASK_ID, 2)
    app.wait_text("[data-testid=thread]", USER_ID)

    # The customers list is the expert's only; each look is a step.
    app.clickable("[data-testid=records] [data-view=users]").click()
    app.wait_count("[data-testid=timeline-entry]", 3)
    app.css("[data-testid=table-users] .vtable-row")
    assert "agent doing this task is not given it" in app.text_of("[data-testid=expert-only]")
    app.search_records("users", "ethan_martin_2396", 4, expect_rows=1)
    app.open_record("users", "ethan_martin_2396", 5, shows="Ethan Martin")
    app.shot("31-tau-airline-customer-record")

    # Hiding a column of a wide list changes the screen only: no look-up is recorded.
    headers = len(app.all("[data-testid=table-users] [role=columnheader]"))
    app.clickable("[data-testid=column-chooser] summary").click()
    app.clickable("[data-testid=column-chooser] input[data-column=city]").click()
    app.wait_count("[data-testid=table-users] [role=columnheader]", headers - 1)
    app.clickable("[data-testid=column-chooser] summary").click()
    assert app.steps() == 5

    app.open_tool("user details", "get_user_details")
    app.fill("get_user_details", user_id="ethan_martin_2396")
    app.run(6)
    app.open_tool("certificate", "send_certificate")
    app.fill("send_certificate", user_id="ethan_martin_2396", amount="150")
    app.run(7)
    app.wait_text("[data-testid=step-result]", "Certificate")
    app.send_message(CLOSING, 8)
    # The customer answers the closing as a customer would, not "what do you need from me?".
    app.wait_text("[data-testid=thread]", THANKS)
    app.shot("32-tau-airline-compensated")

    # The policy and the timeline side by side, to check a rule while writing a why.
    app.clickable("[data-testid=tab-both]").click()
    app.css("[data-testid=dock-both] [data-testid=policy]")
    app.css("[data-testid=dock-both] [data-testid=timeline]")
    app.shot("33-tau-airline-policy-and-timeline")

    app.submit_by_keyboard()

    conn = store(data_dir)
    (episode,) = conn.execute("SELECT * FROM episodes").fetchall()
    assert (episode["world_id"], episode["task_id"], episode["status"]) == ("tau-airline", TASK, "submitted")
    assert episode["actor_kind"] == "expert"
    rows = conn.execute(
        "SELECT action, observation, is_error, retracted FROM steps WHERE episode_id = ? ORDER BY idx", (episode["id"],)
    ).fetchall()
    conn.close()
    actions = [json.loads(r["action"]) for r in rows]
    observations = [json.loads(r["observation"]) for r in rows]
    assert not any(r["is_error"] or r["retracted"] for r in rows)
    assert [a.get("message") for a in actions[:2]] == [ASK_HELP, ASK_ID]
    assert observations[0]["text"].startswith(REQUEST) and observations[1]["text"] == USER_ID
    assert actions[2] == {"tool": "view_users", "args": {"limit": 200}}
    assert actions[3] == {"tool": "view_users", "args": {"limit": 200, "search": "ethan_martin_2396"}}
    assert observations[3]["content"]["total"] == 1
    assert actions[4] == {"tool": "view_users", "args": {"key": "ethan_martin_2396"}}
    assert observations[4]["content"]["name"] == "Ethan Martin"
    assert actions[5] == {"tool": "get_user_details", "args": {"user_id": "ethan_martin_2396"}}
    assert actions[6] == {"tool": "send_certificate", "args": {"user_id": "ethan_martin_2396", "amount": 150}}
    assert actions[7] == {"message": CLOSING}
    assert observations[7]["text"] == THANKS
    assert episode["final_message"] == CLOSING
