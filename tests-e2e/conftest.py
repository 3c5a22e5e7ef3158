"""Fixtures for driving the real Understudy window through tauri-driver.

scripts/app.sh (app_e2e) starts Xvfb and tauri-driver, then runs pytest with
APP_BINARY (the debug build) and WORLDS_DIR set. Each test gets its own
temporary data folder, so its SQLite store starts empty.
"""

import os
import signal
import time
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.remote.client_config import ClientConfig
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts" / "e2e"
DRIVER_URL = os.environ.get("TAURI_DRIVER_URL", "http://127.0.0.1:4444")
# Selenium waits forever for a WebDriver reply unless told otherwise. Once,
# the window's page stopped answering mid-test and the suite sat for two
# hours; every command is bounded so such a hang fails its test instead.
COMMAND_TIMEOUT_S = 120


def app_binary() -> str:
    return os.environ.get("APP_BINARY", str(ROOT / "target" / "debug" / "understudy-app"))


class App:
    """One launch of the app, and helpers to act in it as an expert would."""

    def __init__(self, data_dir: Path, extra_args: list[str] | None = None):
        self.data_dir = data_dir
        options = ArgOptions()
        options.set_capability("browserName", "wry")
        options.set_capability(
            "tauri:options",
            {
                "application": app_binary(),
                "args": [
                    "--data-dir",
                    str(data_dir),
                    "--worlds-dir",
                    os.environ.get("WORLDS_DIR", str(ROOT / "fixtures" / "worlds")),
                ]
                + (extra_args or []),
            },
        )
        self.driver = webdriver.Remote(
            command_executor=DRIVER_URL,
            options=options,
            client_config=ClientConfig(remote_server_addr=DRIVER_URL, timeout=COMMAND_TIMEOUT_S),
        )
        self.driver.set_window_size(1440, 900)

    # ---- finding things ----

    def wait(self, timeout: float = 15) -> WebDriverWait:
        return WebDriverWait(self.driver, timeout)

    def css(self, selector: str, timeout: float = 15):
        return self.wait(timeout).until(EC.presence_of_element_located((By.CSS_SELECTOR, selector)))

    def visible(self, selector: str, timeout: float = 15):
        return self.wait(timeout).until(EC.visibility_of_element_located((By.CSS_SELECTOR, selector)))

    def clickable(self, selector: str, timeout: float = 15):
        return self.wait(timeout).until(EC.element_to_be_clickable((By.CSS_SELECTOR, selector)))

    def all(self, selector: str):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def text_of(self, selector: str) -> str:
        return self.css(selector).text

    def wait_text(self, selector: str, text: str, timeout: float = 15):
        self.wait(timeout).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, selector), text))

    def wait_count(self, selector: str, n: int, timeout: float = 15):
        self.wait(timeout).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, selector)) == n)

    def shot(self, name: str):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        # Let the page paint what it has before capturing it.
        self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "requestAnimationFrame(() => requestAnimationFrame(() => done()));"
        )
        self.driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    # ---- acting ----

    def type_into(self, selector: str, text: str, clear: bool = True):
        """Types into the field, again if the screen re-rendered it under
        us (a sync finishing can redraw a card between finding its field
        and typing: the old element is then stale or not interactable)."""

        def attempt(_driver):
            try:
                el = self.clickable(selector)
                if clear:
                    el.clear()
                el.send_keys(text)
                return el
            except (ElementNotInteractableException, StaleElementReferenceException):
                return False

        return self.wait().until(attempt)

    def create_profile(self, name="Renee Okafor", domain="Customer support", credentials="8 years leading SaaS billing support"):
        self.css("[data-testid=expert-form]")
        self.type_into("input[name=name]", name)
        self.type_into("input[name=domain]", domain)
        self.type_into("textarea[name=credentials]", credentials)
        self.clickable("input[name=attest]").click()
        self.clickable("[data-testid=expert-form] button[type=submit]").click()
        self.css("[data-testid=expert-profile]")

    def open_world(self, world_id: str = "support-desk"):
        """Shows a world's tasks on the start screen (the list holds every bundled world)."""
        self.clickable(f"[data-world='{world_id}']").click()
        self.css(f"[data-world='{world_id}'][aria-current=true]")

    def start_task(self, task_id: str, world_id: str = "support-desk"):
        self.open_world(world_id)
        self.clickable(f"[data-task='{task_id}'] button.task-open").click()
        self.css("[data-screen=workspace]")
        self.css("[data-testid=records]")

    def steps(self) -> int:
        return len(self.all("[data-testid=timeline-entry]"))

    def open_tool(self, query: str, tool: str):
        """Ctrl+K, type a few letters, Enter: the keyboard way to pick a tool."""
        self.clickable("[data-testid=open-palette]")
        self.keys(Keys.CONTROL, "k")
        box = self.visible("[data-testid=palette] input")
        box.send_keys(query)
        self.css(f"[data-testid=palette] li[data-tool='{tool}'][aria-selected=true]")
        box.send_keys(Keys.ENTER)
        self.css(f"[data-testid=tool-form][data-tool='{tool}']")
        # Picking a tool moves the focus to its first field: let it land
        # before typing, as a person would.
        self.wait().until(lambda d: d.execute_script("return !!document.activeElement.closest('[data-testid=tool-form]')"))

    def keys(self, modifier: str, key: str):
        """Presses modifier+key as a person would (real key events)."""
        ActionChains(self.driver).key_down(modifier).send_keys(key).key_up(modifier).perform()

    def fill(self, tool: str, **fields):
        for name, value in fields.items():
            self.type_into(f"#f_{tool}_{name}", str(value))

    def run(self, expect_steps: int):
        self.clickable("[data-testid=run]").click()
        self.wait_count("[data-testid=timeline-entry]", expect_steps)

    def send_message(self, text: str, expect_steps: int):
        self.type_into("[data-testid=composer]", text)
        self.clickable("[data-testid=send]").click()
        self.wait_count("[data-testid=timeline-entry]", expect_steps)

    def search_records(self, view: str, text: str, expect_steps: int, expect_rows: int | None = None):
        """Searches the open records list (Enter), a recorded look-up."""
        self.type_into("[data-testid=records-search]", text).send_keys(Keys.ENTER)
        self.wait_count("[data-testid=timeline-entry]", expect_steps)
        if expect_rows is not None:
            self.wait_count(f"[data-testid=table-{view}] .vtable-row", expect_rows)

    def open_record(self, view: str, key: str, expect_steps: int, shows: str):
        """Opens one row of a records list, a recorded look-up, and waits for the record."""
        self.clickable(f"[data-testid=table-{view}] .vtable-row[data-key='{key}']").click()
        self.wait_count("[data-testid=timeline-entry]", expect_steps)
        self.wait_text("[data-testid=record-panel]", shows)

    def submit_by_keyboard(self):
        """Ctrl+S opens the review with the focus on Submit; Ctrl+Enter submits."""
        self.keys(Keys.CONTROL, "s")
        self.css("[data-testid=review]")
        self.wait(5).until(lambda d: d.execute_script("return document.activeElement.dataset.testid") == "confirm-submit")
        self.keys(Keys.CONTROL, Keys.ENTER)
        self.css("[data-testid=submitted]")

    def show_timeline(self):
        self.clickable("[data-testid=tab-timeline]").click()
        self.css("[data-testid=timeline]")

    def pid(self) -> int | None:
        """The app's process (found by its exact binary and data folder)."""
        binary = os.path.realpath(app_binary())
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and os.path.realpath(argv[0].decode(errors="replace")) == binary and str(self.data_dir).encode() in argv:
                return int(proc.name)
        return None

    def kill(self):
        pid = self.pid()
        assert pid is not None, "the app process was not found"
        os.kill(pid, signal.SIGKILL)
        for _ in range(50):
            if self.pid() is None:
                break
            time.sleep(0.1)
        try:
            self.driver.quit()
        except Exception:
            pass

    def quit(self):
        try:
            self.driver.quit()
        except Exception:
            pass


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    return d


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def launch(data_dir: Path, request):
    apps: list[App] = []

    def _launch() -> App:
        app = App(data_dir)
        apps.append(app)
        return app

    yield _launch
    failed = getattr(request.node, "report_call", None)
    if failed is not None and failed.failed and apps:
        try:
            apps[-1].shot(f"FAILED-{request.node.name}")
        except Exception:
            pass
    for app in apps:
        app.quit()
