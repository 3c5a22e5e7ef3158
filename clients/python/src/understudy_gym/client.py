"""Talking to `understudy serve`: JSON lines over a child process's stdio, or
HTTP to a running server. Both expose ``call(op, **fields) -> dict`` and raise
:class:`UnderstudyError` with the server's error code and message."""

from __future__ import annotations

import collections
import http.client
import json
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Sequence

__all__ = ["UnderstudyError", "ServerGone", "StdioClient", "HttpClient", "HttpServer", "find_binary"]


class UnderstudyError(Exception):
    """A request the server refused. ``code`` is stable; branch on it."""

    def __init__(self, code: str, message: str, status: int | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


class ServerGone(UnderstudyError):
    """The server process exited or the connection broke."""

    def __init__(self, message: str):
        super().__init__("server_gone", message)


def _repo_root() -> Path | None:
    # An editable install from a checkout: clients/python/src/understudy_gym/.
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "Cargo.toml").is_file() and (parent / "clients" / "python").is_dir():
            return parent
    return None


def find_binary(binary: str | os.PathLike[str] | None = None) -> str:
    """The `understudy` executable: ``binary``, else $UNDERSTUDY_BIN, else
    `understudy` on PATH, else a build in the checkout this package lives in
    (target/release, then target/debug)."""
    candidates: list[str] = []
    if binary:
        candidates.append(os.fspath(binary))
    env = os.environ.get("UNDERSTUDY_BIN")
    if env:
        candidates.append(env)
    on_path = shutil.which("understudy")
    if on_path:
        candidates.append(on_path)
    root = _repo_root()
    if root is not None:
        for profile in ("release", "debug"):
            candidates.append(os.fspath(root / "target" / profile / "understudy"))
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    tried = ", ".join(candidates) or "nothing"
    raise FileNotFoundError(
        "cannot find the `understudy` binary: set UNDERSTUDY_BIN, put it on PATH, "
        f"or build it with `cargo build --release` (tried {tried})"
    )


def _raise_for(error: dict[str, Any]) -> None:
    raise UnderstudyError(
        str(error.get("code", "error")), str(error.get("message", "")), error.get("status")
    )


class StdioClient:
    """Runs `understudy serve --stdio` as a child process. Closing its input
    ends the server, which records any open episode as abandoned."""

    def __init__(
        self,
        worlds: Sequence[str | os.PathLike[str]],
        *,
        binary: str | os.PathLike[str] | None = None,
        store: str | os.PathLike[str] | None = None,
        durability: str | None = None,
        user_sim: str | None = None,
        extra_args: Sequence[str] = (),
    ):
        if not worlds:
            raise ValueError("StdioClient needs at least one world folder")
        args = [find_binary(binary), "serve", "--stdio"]
        for w in worlds:
            args += ["--world", os.fspath(w)]
        if store is not None:
            args += ["--store", os.fspath(store)]
        if durability is not None:
            args += ["--durability", durability]
        if user_sim is not None:
            args += ["--user-sim", user_sim]
        args += list(extra_args)
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._stderr: collections.deque[str] = collections.deque(maxlen=50)
        self._drain = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drain.start()
        self._next_id = 0
        self._lock = threading.Lock()
        self.call("health")

    def _drain_stderr(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def _gone(self, what: str) -> ServerGone:
        self._proc.poll()
        tail = "\n".join(self._stderr).strip()
        code = self._proc.returncode
        detail = f" (exit code {code})" if code is not None else ""
        return ServerGone(f"{what}{detail}" + (f": {tail}" if tail else ""))

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            if self._proc.stdin is None or self._proc.stdout is None or self._proc.stdin.closed:
                raise ServerGone("the client is closed")
            self._next_id += 1
            request = {"id": self._next_id, "op": op, **fields}
            try:
                self._proc.stdin.write(json.dumps(request) + "\n")
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise self._gone("the understudy server exited") from None
            line = self._proc.stdout.readline()
            if not line:
                raise self._gone("the understudy server exited")
        response = json.loads(line)
        if response.get("id") not in (None, self._next_id):
            raise ServerGone(f"response out of order: {line[:200]}")
        if "error" in response:
            _raise_for(response["error"])
        return response["result"]

    def close(self, timeout: float = 10.0) -> None:
        """Ends the server: end of input, then a wait, then a kill."""
        if self._proc.poll() is None:
            try:
                if self._proc.stdin and not self._proc.stdin.closed:
                    self._proc.stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdout, self._proc.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass

    @property
    def returncode(self) -> int | None:
        return self._proc.poll()


class HttpServer:
    """`understudy serve --http` on 127.0.0.1 as a child process, on a port
    the OS picks; ``url`` is where it listens. ``stop()`` (or leaving the
    ``with`` block) ends it: SIGTERM, then a kill after ``timeout``."""

    def __init__(
        self,
        worlds: Sequence[str | os.PathLike[str]],
        *,
        store: str | os.PathLike[str] | None,
        binary: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
    ):
        """``store=None`` leaves the store to the server ($UNDERSTUDY_STORE,
        else the desktop app's), so episodes show up in the app."""
        args = [os.fspath(binary or find_binary()), "serve", "--http", "127.0.0.1:0", "--durability", "fast"]
        if store is not None:
            args += ["--store", os.fspath(store)]
        for w in worlds:
            args += ["--world", os.fspath(w)]
        args += list(extra_args)
        # stderr goes to a file, not a pipe nobody drains (a chatty server
        # would block on it), so a server that fails to start can say why.
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self._proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._stderr, text=True, env=env)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line.startswith("listening on "):
            self._end(timeout=10.0)
            self._stderr.seek(0)
            said = "\n".join(self._stderr.read().strip().splitlines()[-20:])
            self._stderr.close()
            raise ServerGone(
                f"understudy serve --http did not start (exit code {self._proc.returncode}): "
                + (said or line.strip() or "no output")
            )
        self.url = line.split(" ", 2)[2].strip()

    def _end(self, timeout: float) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def stop(self, timeout: float = 10.0) -> None:
        self._end(timeout)
        self._stderr.close()

    def __enter__(self) -> "HttpServer":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


class HttpClient:
    """Talks to a running `understudy serve --http` (one keep-alive
    connection, re-opened if the server dropped it). ``token`` is the
    server's bearer token (`serve --token`); it defaults to
    $UNDERSTUDY_TOKEN, the variable the server reads too."""

    #: The server's answer when it holds as many episodes as it may
    #: (`serve --max-concurrent`); a reset that gets it was not started, so
    #: it is safe to send again.
    BUSY = "too_many_episodes"

    def __init__(self, url: str, timeout: float = 60.0, token: str | None = None, busy_timeout: float = 120.0):
        """``busy_timeout``: how long a reset keeps retrying, with
        exponential back-off, while the server is full (HTTP 429), before
        raising; 0 raises at once."""
        if busy_timeout < 0:
            raise ValueError(f"busy_timeout must be 0 or more seconds, got {busy_timeout!r}")
        self._busy_timeout = busy_timeout
        if token is None:
            token = os.environ.get("UNDERSTUDY_TOKEN") or None
        self._token = token
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"expected an http:// URL, got {url!r}")
        self._host = parsed.hostname
        self._port = parsed.port or 80
        self._prefix = parsed.path.rstrip("/")
        self._timeout = timeout
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()

    _GET = {"state", "schema", "tasks", "health"}

    def _request(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            try:
                headers = {"Content-Type": "application/json"} if body is not None else {}
                if self._token:
                    headers["Authorization"] = f"Bearer {self._token}"
                self._conn.request(method, self._prefix + path, body=body, headers=headers)
                resp = self._conn.getresponse()
                return resp.status, resp.read()
            except (http.client.HTTPException, ConnectionError, OSError) as e:
                self._conn.close()
                self._conn = None
                # Only a request that never reached the server is retried:
                # reset and step are not idempotent.
                if attempt == 1 or not isinstance(e, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)):
                    raise ServerGone(f"cannot reach {self._host}:{self._port}: {e}") from None
        raise AssertionError("unreachable")

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        """One request. A request the server refused because it is full
        (429, too many open episodes) is sent again after 0.05 s, doubling
        up to 2 s between tries with random jitter, so many clients waiting
        for a slot do not retry in step, until ``busy_timeout`` has passed."""
        deadline = time.monotonic() + self._busy_timeout
        delay = 0.05
        while True:
            try:
                return self._call_once(op, **fields)
            except UnderstudyError as e:
                remaining = deadline - time.monotonic()
                if e.code != self.BUSY or remaining <= 0:
                    raise
                time.sleep(min(remaining, delay * random.uniform(0.5, 1.0)))
                delay = min(delay * 2, 2.0)

    def _call_once(self, op: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            if op in self._GET:
                query = urllib.parse.urlencode({k: v for k, v in fields.items() if v is not None})
                status, data = self._request("GET", f"/{op}" + (f"?{query}" if query else ""), None)
            else:
                status, data = self._request("POST", f"/{op}", json.dumps(fields).encode())
        try:
            body = json.loads(data)
        except ValueError:
            raise UnderstudyError("invalid_response", f"HTTP {status}: {data[:200]!r}", status) from None
        if status != 200 or "error" in body:
            _raise_for(body.get("error", {"code": "http_error", "message": f"HTTP {status}", "status": status}))
        return body

    def close(self, timeout: float = 0.0) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
