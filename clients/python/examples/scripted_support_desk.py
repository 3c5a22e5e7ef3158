"""One support-desk task end to end with a scripted policy, printing the
rubric score. Run from the repository after its set-up:

    python clients/python/examples/scripted_support_desk.py
"""

import json

import gymnasium as gym

import understudy_gym  # registers understudy/<world>-<task> for the bundled worlds

# What a support lead does for ticket T-1042: look, refund, tell, close, submit.
SCRIPT = [
    {"tool": "get_ticket", "args": {"ticket_id": "T-1042"}},
    {"tool": "lookup_customer", "args": {"customer_id": "C-1007"}},
    {"tool": "list_invoices", "args": {"customer_id": "C-1007"}},
    {"tool": "get_invoice", "args": {"invoice_id": "INV-24073"}},
    {"tool": "issue_refund", "args": {"invoice_id": "INV-24073", "amount": 79.00, "ticket_id": "T-1042",
                                      "reason": "Duplicate charge: March invoice was charged twice on March 1"}},
    {"message": "Hi Dana, you're right: invoice INV-24073 was charged twice on March 1. I've refunded the "
                "extra $79.00 to your Visa; it should appear within 5-10 business days."},
    {"tool": "close_ticket", "args": {"ticket_id": "T-1042",
                                      "resolution": "Refunded duplicate March charge of $79.00 on INV-24073."}},
    {"submit": True},
]

env = gym.make("understudy/support-desk-duplicate-charge", model="scripted-example")
obs, info = env.reset(seed=0)
print("customer:", obs)
for action in SCRIPT:
    obs, reward, terminated, truncated, info = env.step(json.dumps(action))
    print(f"> {json.dumps(action)[:70]}\n  {obs[:100]!r}")
    if terminated or truncated:
        break
env.close()

score = info.get("score")
print("reward:", reward, f"({info['reward_source']})")
if score:
    print("rubric score:", score["value"], "range", score["range"])
    for c in score["criteria"]:
        met = {True: "met", False: "not met", None: "pending"}[c["met"]]
        kind = f"{c['points']:+g} points" + (", gate" if c["gate"] else "")
        print(f"  {c['id']}: {met} ({kind})")
else:
    print("no rubric scored this task:", info.get("reward_note"))
