"""Tests run against the real `understudy` binary: $UNDERSTUDY_BIN, PATH, or
the checkout's target/{release,debug} build."""

from __future__ import annotations

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
    from understudy_gym import HttpServer

    with HttpServer([SUPPORT_DESK, MINI], store=store, binary=binary) as server:
        yield server.url
