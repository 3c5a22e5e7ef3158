"""Checks that Understudy's dataset exports load with Hugging Face `datasets`.

Usage: python check_datasets.py EXPORT_DIR

EXPORT_DIR is what `UNDERSTUDY_EXPORT_DIR=EXPORT_DIR cargo test --test export
export_folder_for_python` leaves behind:

    EXPORT_DIR/dataset/        a dataset folder (README.md, meta/info.json, data/*.jsonl)
    EXPORT_DIR/trl.jsonl       the same episodes as TRL rows
    EXPORT_DIR/openai.jsonl    the same episodes as OpenAI fine-tuning rows
    EXPORT_DIR/expected.json   {"episodes": n, "steps": n, "files": n}

It loads the folder exactly as a user would (`load_dataset(folder)`, which
reads the dataset card's YAML), and the JSONL files with
`load_dataset("json", data_files=...)`, then checks columns, row counts,
checksums and the shape of the conversations.
"""

import hashlib
import json
import os
import shutil
import sys
import tempfile

TRL_COLUMNS = [
    "messages",
    "tools",
    "task_id",
    "world_id",
    "world_version",
    "episode_id",
    "actor",
    "status",
    "reward",
    "pass",
]


def fail(message):
    print(f"check_datasets: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def check_conversation(row, where):
    messages = row["messages"]
    check(messages[0]["role"] == "system", f"{where}: the first message is the system prompt")
    check("Task:" in messages[0]["content"], f"{where}: the system prompt holds the task")
    check(messages[1]["role"] == "user", f"{where}: the second message is the customer's opening")
    calls = 0
    for i, m in enumerate(messages):
        check(m["role"] in ("system", "user", "assistant", "tool"), f"{where}: message {i} has role {m['role']!r}")
        for call in m.get("tool_calls") or []:
            calls += 1
            check(call["type"] == "function", f"{where}: message {i}: tool call type")
            check(isinstance(call["function"]["arguments"], dict), f"{where}: message {i}: arguments must be an object")
            check(call["id"] == f"call_{call['id'][5:]}" and call["id"][5:].isdigit(), f"{where}: message {i}: call id {call['id']!r}")
            if i + 1 < len(messages):
                nxt = messages[i + 1]
                check(nxt["role"] == "tool" and nxt["name"] == call["function"]["name"], f"{where}: message {i} is answered by its tool")
                check(nxt["tool_call_id"] == call["id"], f"{where}: message {i + 1} names the call it answers")
        if m["role"] == "assistant" and m.get("reasoning_content"):
            check(m["reasoning_content"] != m["content"], f"{where}: message {i}: the rationale appears once")
    check(messages[-1]["role"] == "assistant", f"{where}: the row ends on an assistant turn")
    tool_names = {t["function"]["name"] for t in row["tools"]}
    for m in messages:
        for call in m.get("tool_calls") or []:
            check(call["function"]["name"] in tool_names, f"{where}: {call['function']['name']} is in `tools`")
    return calls


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    if len(sys.argv) != 2:
        fail("usage: check_datasets.py EXPORT_DIR")
    root = sys.argv[1]
    with open(os.path.join(root, "expected.json")) as f:
        expected = json.load(f)
    # Keep the loader's cache out of the user's home and never go online.
    os.environ.setdefault("HF_DATASETS_CACHE", tempfile.mkdtemp(prefix="understudy-hf-"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    folder = os.path.join(root, "dataset")
    with open(os.path.join(folder, "meta", "info.json")) as f:
        info = json.load(f)
    check(info["format"] == "understudy.dataset/1", "meta/info.json format")
    check(info["counts"]["episodes"] == expected["episodes"], "meta/info.json episode count")
    check(info["counts"]["steps"] == expected["steps"], "meta/info.json step count")
    check(len(info["files"]) == expected["files"], "meta/info.json lists every data file")
    for entry in info["files"]:
        check(sha256(os.path.join(folder, entry["path"])) == entry["sha256"], f"checksum of {entry['path']}")

    ds = datasets.load_dataset(folder)
    check(list(ds.keys()) == ["train"], f"one train split, got {list(ds.keys())}")
    train = ds["train"]
    check(train.column_names == TRL_COLUMNS, f"folder columns: {train.column_names}")
    check(train.num_rows == expected["episodes"], f"folder rows: {train.num_rows} != {expected['episodes']}")
    calls = sum(check_conversation(row, f"folder row {i}") for i, row in enumerate(train))
    check(calls > 0, "the folder has tool calls")
    check(all(r is None for r in train["reward"]), "rewards are null until episodes are scored")
    check(all(p is None for p in train["pass"]), "pass is null until episodes are scored")
    check(set(train["world_id"]) == {w["id"] for w in info["worlds"]}, "world ids agree with meta/info.json")
    check(all(a["kind"] in ("expert", "agent") for a in train["actor"]), "actor.kind")
    print(f"check_datasets: folder ok: {train.num_rows} rows, {len(info['files'])} files, {calls} tool calls")

    # Two exports loaded from one path, one after the other: the second
    # load must return the second export's rows, never the first's from
    # the loader's cache.
    # The loader keys its cache by file names and modification times; both
    # copies get the same times, as two exports in one second would on a
    # file system with coarse times, so only the names can tell them apart.
    same_path = os.path.join(tempfile.mkdtemp(prefix="understudy-same-"), "dataset")

    def place(src):
        shutil.copytree(src, same_path)
        for base, _, names in os.walk(same_path):
            for name in names:
                os.utime(os.path.join(base, name), (1_700_000_000, 1_700_000_000))

    place(folder)
    first = datasets.load_dataset(same_path, split="train")
    check(first.num_rows == expected["episodes"], "first export at the shared path")
    shutil.rmtree(same_path)
    place(os.path.join(root, "dataset-mini"))
    second = datasets.load_dataset(same_path, split="train")
    check(
        second.num_rows == expected["mini_episodes"] and set(second["world_id"]) == {"mini"},
        f"the second export at the same path loads as itself, got {second.num_rows} rows of {set(second['world_id'])}",
    )
    print(f"check_datasets: same path, two exports: {first.num_rows} then {second.num_rows} rows")

    trl = datasets.load_dataset("json", data_files=os.path.join(root, "trl.jsonl"), split="train")
    check(trl.column_names == TRL_COLUMNS, f"TRL JSONL columns: {trl.column_names}")
    check(trl.num_rows == expected["episodes"], f"TRL JSONL rows: {trl.num_rows}")
    for i, row in enumerate(trl):
        check_conversation(row, f"trl.jsonl row {i + 1}")
    check(sorted(trl["episode_id"]) == sorted(train["episode_id"]), "the folder and the JSONL hold the same episodes")
    print(f"check_datasets: trl.jsonl ok: {trl.num_rows} rows")

    oai = datasets.load_dataset("json", data_files=os.path.join(root, "openai.jsonl"), split="train")
    check(oai.column_names == ["messages", "tools", "parallel_tool_calls"], f"OpenAI JSONL columns: {oai.column_names}")
    check(not any(oai["parallel_tool_calls"]), "parallel_tool_calls is false: one call per turn")
    check(oai.num_rows == expected["episodes"], f"OpenAI JSONL rows: {oai.num_rows}")
    for i, row in enumerate(oai):
        check(row["messages"][-1]["role"] == "assistant", f"openai row {i + 1}: ends on an assistant turn")
        ids = {}
        for m in row["messages"]:
            for call in m.get("tool_calls") or []:
                check(isinstance(call["function"]["arguments"], str), f"openai row {i + 1}: arguments is a JSON string")
                json.loads(call["function"]["arguments"])
                ids[call["id"]] = True
            if m["role"] == "tool":
                check(m["tool_call_id"] in ids, f"openai row {i + 1}: tool turn answers a known call")
    print(f"check_datasets: openai.jsonl ok: {oai.num_rows} rows")
    print("check_datasets: 4 passed, 0 failed")


if __name__ == "__main__":
    main()
