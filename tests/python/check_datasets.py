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


# OpenAI's rules for a chat fine-tuning example with tools, as its fine-tuning
# guide and its data-preparation cookbook state them: the keys each message
# may have, the roles, content or tool calls on every assistant message,
# string arguments, ids that tool turns answer, weights of 0 or 1, at least
# one assistant message, and `tools` as function specs.
OPENAI_MESSAGE_KEYS = {"role", "content", "name", "tool_calls", "tool_call_id", "weight"}
OPENAI_ROLES = {"system", "user", "assistant", "tool"}


def openai_problems(row):
    problems = []
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["missing_messages_list"]
    calls = set()
    for i, m in enumerate(messages):
        unknown = set(m) - OPENAI_MESSAGE_KEYS
        if unknown:
            problems.append(f"message {i}: unrecognized keys {sorted(unknown)}")
        role = m.get("role")
        if role not in OPENAI_ROLES:
            problems.append(f"message {i}: unrecognized role {role!r}")
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            problems.append(f"message {i}: content is not text")
        if role == "assistant":
            if not content and not m.get("tool_calls"):
                problems.append(f"message {i}: an assistant message needs content or tool_calls")
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                if c.get("type") != "function" or not isinstance(c.get("id"), str) or not fn.get("name"):
                    problems.append(f"message {i}: a tool call needs id, type function and a name")
                try:
                    if not isinstance(json.loads(fn.get("arguments")), dict):
                        problems.append(f"message {i}: arguments must encode an object")
                except (TypeError, ValueError):
                    problems.append(f"message {i}: arguments must be a JSON string")
                calls.add(c.get("id"))
        elif role in ("system", "user") and not isinstance(content, str):
            problems.append(f"message {i}: {role} messages need content")
        if role == "tool" and m.get("tool_call_id") not in calls:
            problems.append(f"message {i}: tool_call_id {m.get('tool_call_id')!r} answers no earlier call")
        if "weight" in m and (role != "assistant" or m["weight"] not in (0, 1)):
            problems.append(f"message {i}: weight is 0 or 1, on assistant messages only")
    if not any(m.get("role") == "assistant" for m in messages):
        problems.append("example_missing_assistant_message")
    for t in row.get("tools") or []:
        fn = t.get("function") or {}
        if t.get("type") != "function" or not fn.get("name") or not isinstance(fn.get("parameters"), dict):
            problems.append(f"tool {fn.get('name')!r}: needs type function, a name and parameters")
    if not isinstance(row.get("parallel_tool_calls", False), bool):
        problems.append("parallel_tool_calls must be true or false")
    return problems


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
    with open(os.path.join(root, "openai.jsonl")) as f:
        for n, line in enumerate(f, 1):
            problems = openai_problems(json.loads(line))
            check(not problems, f"openai.jsonl line {n} breaks OpenAI's rules: {problems}")
    check(openai_problems({"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "y"}]})
          == ["example_missing_assistant_message"], "the OpenAI checker catches an example with no assistant turn")
    print(f"check_datasets: openai.jsonl ok: {oai.num_rows} rows, each within OpenAI's rules")
    print("check_datasets: 4 passed, 0 failed")


if __name__ == "__main__":
    main()
