"""A tiny OpenAI-compatible chat completions server on loopback that replays
scripted turns: no model weights, no network. Each request's script is
chosen by a marker found in its system message (the task id in Understudy's
instructions), and the turn by how many assistant messages the request
already holds, so concurrent rollouts each get their own script. After the
script, every turn calls `submit`."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def turn_of(action: dict) -> dict:
    """A solution step (`{"tool", "args"}` or `{"message"}`) as the
    assistant message that performs it."""
    if "message" in action:
        return {"role": "assistant", "content": action["message"]}
    return tool_call_turn(action["tool"], action.get("args", {}))


def tool_call_turn(name: str, args: dict) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }


class ScriptedOpenAI:
    """``with ScriptedOpenAI({"duplicate-charge": [turn, ...]}) as fake:``
    serves ``fake.base_url`` (``…/v1``); ``fake.requests`` keeps every
    request body."""

    def __init__(self, scripts: dict[str, list[dict]]):
        self.scripts = scripts
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                self._send(200, fake.completion(body))

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def completion(self, body: dict) -> dict:
        messages = body["messages"]
        system = next((m.get("content") or "" for m in messages if m["role"] in ("system", "developer")), "")
        if isinstance(system, list):
            system = "".join(p.get("text", "") for p in system)
        keys = [k for k in self.scripts if f"`{k}`" in system]
        if len(keys) != 1:
            raise AssertionError(f"no single script matches the system message: {system[:200]!r}")
        script = self.scripts[keys[0]]
        n = sum(1 for m in messages if m["role"] == "assistant")
        turn = dict(script[n]) if n < len(script) else tool_call_turn("submit", {})
        if turn.get("tool_calls"):
            turn["tool_calls"] = [
                {**c, "id": f"call_{n}_{i}"} for i, c in enumerate(turn["tool_calls"])
            ]
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": turn, "finish_reason": "tool_calls" if turn.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def __enter__(self) -> "ScriptedOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
