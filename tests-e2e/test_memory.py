"""What the app holds in memory during a task, against a blank Tauri page.

A measurement, not a pass/fail threshold: memory depends on the machine's
WebKitGTK and on how busy it is, so a timed or sized assertion would be
flaky. It writes artifacts/e2e/memory.json and prints the figures; issue 15
asks for the task's figure to be at most 1.25 times the blank page's.

Both launches go through WebDriver (automation adds its own overhead to
each), with the same binary. Each samples, every 50 ms, the app process and
everything it started (WebKitWebProcess, WebKitNetworkProcess):

- PSS (proportional set size, /proc/<pid>/smaps_rollup): shared pages are
  split between the processes sharing them, so the sum is what the tree
  costs the machine. This is the figure to compare.
- RSS: each process's resident pages, summed; shared libraries count once
  per process, so it overstates the total (the issue's 821 MB was RSS).
"""

import json
import threading
import time
from pathlib import Path

from conftest import ARTIFACTS, App
from perf import descendants, look_up_and_open_ticket

BLANK_SECONDS = 4.0


def status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler:
    """Peak summed PSS and RSS of a process tree, sampled in the background."""

    def __init__(self, root_pid: int):
        self.root = root_pid
        self.peak_pss = self.peak_rss = self.last_pss = 0
        self.processes: dict[str, int] = {}
        self.phases: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            pids = descendants(self.root)
            pss = sum(pss_kib(p) for p in pids)
            rss = sum(status_kib(p, "VmRSS:") for p in pids)
            self.last_pss = pss
            if pss > self.peak_pss:
                self.peak_pss = pss
                self.processes = {}
                for p in pids:
                    try:
                        name = Path(f"/proc/{p}/comm").read_text().strip()
                    except OSError:
                        continue
                    self.processes[name] = self.processes.get(name, 0) + pss_kib(p)
            self.peak_rss = max(self.peak_rss, rss)
            time.sleep(0.05)

    def mark(self, phase: str):
        """The summed PSS now (after a moment for it to be sampled), by phase."""
        time.sleep(0.5)
        self.phases[phase] = round(self.last_pss / 1024, 1)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        mib = lambda kib: round(kib / 1024, 1)  # noqa: E731
        return {
            "peak_pss_mib": mib(self.peak_pss),
            "settled_pss_mib": mib(self.last_pss),
            "peak_rss_mib": mib(self.peak_rss),
            "pss_mib_by_process_at_peak": {k: mib(v) for k, v in sorted(self.processes.items())},
            "pss_mib_by_phase": self.phases,
        }


def sampled(app: App) -> Sampler:
    for _ in range(200):
        pid = app.pid()
        if pid:
            return Sampler(pid)
        time.sleep(0.05)
    raise AssertionError("the app's process was not found")


def test_memory_during_a_task_against_a_blank_page(tmp_path):
    blank_dir = tmp_path / "blank"
    blank_dir.mkdir()
    blank = App(blank_dir, extra_args=["--blank"])
    try:
        sampler = sampled(blank)
        time.sleep(BLANK_SECONDS)
        blank_mem = sampler.stop()
    finally:
        blank.quit()

    task_dir = tmp_path / "task"
    task_dir.mkdir()
    app = App(task_dir)
    try:
        sampler = sampled(app)
        app.create_profile()
        sampler.mark("start screen")
        app.start_task("duplicate-charge")
        sampler.mark("task opened")
        n = look_up_and_open_ticket(app, 5)
        sampler.mark("after 6 tool runs")
        # Every records list once (a 200-row page each), then back to the invoices.
        for view in [e.get_attribute("data-view") for e in app.all("[data-testid=records] [data-view]")]:
            app.clickable(f"[data-view={view}]").click()
            n += 1
            app.wait_count("[data-testid=timeline-entry]", n)
        sampler.mark("after every records list")
        app.show_timeline()
        app.open_tool("issue refund", "issue_refund")
        app.fill("issue_refund", invoice_id="INV-24073", amount="79", reason="Duplicate charge on March 1", ticket_id="T-1042")
        n += 1
        app.run(n)
        app.send_message("I've refunded the duplicate $79.00 charge.", n + 1)
        time.sleep(2.0)  # let the page settle, still sampling
        sampler.mark("refund and message sent")
        task_mem = sampler.stop()
        steps = app.steps()
    finally:
        app.quit()

    report = {
        "what": "app + WebKit processes, summed; a blank Tauri page (--blank) against a support-desk task",
        "blank": blank_mem,
        "task": task_mem,
        "task_steps": steps,
        "pss_ratio_peak": round(task_mem["peak_pss_mib"] / blank_mem["peak_pss_mib"], 2),
        "rss_ratio_peak": round(task_mem["peak_rss_mib"] / blank_mem["peak_rss_mib"], 2),
        "target_ratio": 1.25,
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "memory.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    # Only that the measurement measured something: the figures are reported, not judged.
    assert blank_mem["peak_pss_mib"] > 0 and task_mem["peak_pss_mib"] > 0, report
    assert steps == n + 1
