"""Tests run against the real `understudy` binary: $UNDERSTUDY_BIN, PATH, or
the checkout's target/{release,debug} build."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SUPPORT_DESK = REPO / "fixtures" / "worlds" / "support-desk"
MINI = REPO / "tests" / "worlds" / "mini"


@pytest.fixture(scope="session")
def binary() -> str:
    from understudy_gym import find_binary

    return find_binary()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite"


@pytest.fixture
def http_server(binary: str, store: Path):
    """A real `understudy serve --http` on 127.0.0.1, port chosen by the OS."""
    proc = subprocess.Popen(
        [binary, "serve", "--http", "127.0.0.1:0", "--world", str(SUPPORT_DESK), "--world", str(MINI), "--store", str(store), "--durability", "fast"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on "), line
        yield line.split(" ", 2)[2].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
