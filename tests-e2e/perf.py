"""Performance figures for the desktop app, against an empty Tauri window.

Not part of the test suite (it needs release builds and takes a minute).
Run under Xvfb with tauri-driver listening on 4444, from the repository root:

    cargo build --release -p understudy-app --features tauri/custom-protocol
    target/e2e-venv/bin/python tests-e2e/perf.py

Measures, for the same release binary:
- start-up: process start → first frame of the empty page (`--blank`), and
  process start → start screen interactive (worlds and profile loaded);
- peak RSS of the app and its WebKit processes, summed, sampled every 25 ms;
- click Run → result shown (and durably recorded), over a scripted task.
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = str(ROOT / "target" / "release" / "understudy-app")
RUNS = int(os.environ.get("PERF_RUNS", "7"))


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(proc.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def rss_kib(pids: list[int]) -> int:
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


class PeakRss:
    """Samples the summed RSS of a process tree in the background."""

    def __init__(self, root_pid: int):
        self.root, self.peak, self._stop = root_pid, 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_kib(descendants(self.root)))
            time.sleep(0.025)

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.peak


def cold_start(blank: bool, sample_rss: bool) -> tuple[float, int]:
    """(ms to first frame / interactive, peak RSS KiB). Memory sampling reads
    all of /proc every 25 ms, which on two cores slows start-up, so timing
    runs and memory runs are separate."""
    with tempfile.TemporaryDirectory() as data:
        log = Path(data) / "perf.log"
        env = dict(os.environ, UNDERSTUDY_PERF_LOG=str(log))
        args = [BINARY, "--data-dir", data] + (["--blank"] if blank else [])
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        peak = PeakRss(proc.pid) if sample_rss else None
        label = "blank" if blank else "app"

        def mark() -> float | None:
            lines = log.read_text().splitlines() if log.exists() else []
            found = [line.split()[1] for line in lines if line.split()[:1] == [label]]
            return float(found[0]) if found else None

        deadline = time.time() + 30
        while time.time() < deadline and mark() is None:
            time.sleep(0.01)
        ms = mark()
        if peak:
            time.sleep(2.0)  # keep sampling while the page settles
        rss = peak.stop() if peak else 0
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if ms is None:
            raise SystemExit("the app never reported being interactive")
        return ms, rss


def webdriver_blank_rss() -> int:
    """The empty window's peak RSS when launched through WebDriver, the same
    way as the workload below (automation adds its own overhead)."""
    sys.path.insert(0, str(Path(__file__).parent))
    os.environ["APP_BINARY"] = BINARY
    from conftest import App  # noqa: E402

    with tempfile.TemporaryDirectory() as data:
        app = App(Path(data), extra_args=["--blank"])
        pid = None
        for _ in range(100):
            pid = app.pid()
            if pid:
                break
            time.sleep(0.05)
        peak = PeakRss(pid) if pid else None
        time.sleep(4)
        rss = peak.stop() if peak else 0
        app.quit()
        return rss


def look_up_and_open_ticket(app, runs: int) -> int:
    """The support lead's first moves in duplicate-charge: look the customer
    up, then open the ticket `runs` times. Returns the steps taken."""
    app.open_tool("look up", "lookup_customer")
    app.fill("lookup_customer", email="dana.whitfield@harborlight.io")
    n = 1
    app.run(n)
    app.open_tool("open ticket", "get_ticket")
    app.fill("get_ticket", ticket_id="T-1042")
    for _ in range(runs):
        n += 1
        app.run(n)
    return n


def workload_rss_and_latency() -> tuple[int, list[float]]:
    sys.path.insert(0, str(Path(__file__).parent))
    os.environ["APP_BINARY"] = BINARY
    from conftest import App  # noqa: E402

    with tempfile.TemporaryDirectory() as data:
        app = App(Path(data))
        pid = None
        for _ in range(100):
            pid = app.pid()
            if pid:
                break
            time.sleep(0.05)
        peak = PeakRss(pid) if pid else None
        app.create_profile()
        app.start_task("duplicate-charge")
        n = look_up_and_open_ticket(app, 10)
        app.clickable("[data-view=invoices]").click()
        n += 1
        app.wait_count("[data-testid=timeline-entry]", n)
        app.open_tool("issue refund", "issue_refund")
        app.fill("issue_refund", invoice_id="INV-24073", amount="200", reason="Duplicate charge on March 1", ticket_id="T-1042")
        for _ in range(5):
            n += 1
            app.run(n)
        runs = app.js("return window.__understudyPerf.runs")
        rss = peak.stop() if peak else 0
        app.quit()
        return rss, runs


def main():
    blank, full, blank_mem, full_mem = [], [], [], []
    for _ in range(RUNS):  # interleaved, so changes in machine load hit both
        blank.append(cold_start(True, False)[0])
        full.append(cold_start(False, False)[0])
    for _ in range(max(3, RUNS // 2)):
        blank_mem.append(cold_start(True, True)[1])
        full_mem.append(cold_start(False, True)[1])
    b_ms, a_ms = statistics.median(blank), statistics.median(full)
    b_rss, a_rss = statistics.median(blank_mem), statistics.median(full_mem)
    wd_blank_rss = webdriver_blank_rss()
    work_rss, runs = workload_rss_and_latency()
    report = {
        "runs": RUNS,
        "blank_first_frame_ms_median": round(b_ms),
        "app_interactive_ms_median": round(a_ms),
        "startup_ratio": round(a_ms / b_ms, 2),
        "blank_peak_rss_mib_median": round(b_rss / 1024),
        "app_startup_peak_rss_mib_median": round(a_rss / 1024),
        "app_workload_peak_rss_mib": round(work_rss / 1024),
        "rss_ratio_startup": round(a_rss / b_rss, 2),
        "blank_peak_rss_mib_under_webdriver": round(wd_blank_rss / 1024),
        "rss_ratio_workload": round(work_rss / wd_blank_rss, 2),
        "run_to_result_ms_median": round(statistics.median(runs), 1),
        "run_to_result_ms_max": round(max(runs), 1),
        "run_samples": len(runs),
        "blank_ms_all": sorted(blank),
        "app_ms_all": sorted(full),
        "blank_rss_mib_all": sorted(round(r / 1024) for r in blank_mem),
        "app_rss_mib_all": sorted(round(r / 1024) for r in full_mem),
    }
    out = ROOT / "artifacts" / "perf.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
