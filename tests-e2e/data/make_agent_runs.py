"""Writes agent-runs.jsonl beside this file: two agent runs of support-desk's
cancel-no-refund (one follows the policy, one also refunds the charge),
recorded by the real `understudy serve --stdio` and exported as native
JSONL, the format the app's "Import agent runs" reads.

Usage: python3 make_agent_runs.py path/to/understudy
"""

import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORLD = HERE.parent.parent / "fixtures" / "worlds" / "support-desk"
TASK = "cancel-no-refund"


def solution() -> list[dict]:
    with open(WORLD / "tasks" / f"{TASK}.toml", "rb") as f:
        tasks = tomllib.load(f)["tasks"]
    task = next(t for t in tasks if t["id"] == TASK)
    return [{"message": s["message"]} if "message" in s else {"tool": s["tool"], "args": s["args"]} for s in task["solution"]]


def main(binary: str) -> None:
    good = solution()
    refund = {"tool": "issue_refund", "args": {"invoice_id": "INV-24075", "amount": 79.0, "reason": "Goodwill: business closing", "ticket_id": "T-1049"}}
    sloppy = good[:-2] + [refund, {"message": "Done, you're cancelled and refunded. Bye."}, good[-1]]
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "agents.sqlite"
        requests = []
        for n, (model, actions) in enumerate([("support-agent-v1", good), ("support-agent-v2", sloppy)]):
            requests.append({"id": f"{n}-reset", "op": "reset", "world_id": "support-desk", "task_id": TASK, "model": model})
            requests.extend({"id": f"{n}-{i}", "op": "step", "episode_id": f"@{n}", "action": a} for i, a in enumerate(actions + [{"submit": True}]))
        # Episode ids are known only after reset: drive the server line by line.
        proc = subprocess.Popen([binary, "serve", "--stdio", "--world", str(WORLD), "--store", str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ids: dict[str, str] = {}
        for r in requests:
            if "episode_id" in r:
                r["episode_id"] = ids[r["episode_id"][1:]]
            proc.stdin.write(json.dumps(r) + "\n")
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            if "error" in reply:
                raise SystemExit(f"{r['id']}: {reply['error']}")
            if r["op"] == "reset":
                ids[r["id"].split("-")[0]] = reply["result"]["episode_id"]
        proc.stdin.close()
        proc.wait(timeout=30)
        subprocess.run([binary, "export", "--store", str(store), "--format", "native", "--output", str(HERE / "agent-runs.jsonl")], check=True)


if __name__ == "__main__":
    main(sys.argv[1])
