"""What the app holds in memory during a task, against a blank Tauri page.

Both launches use the same binary, the same WebKit and the same WebKit
settings (webview.rs), and both go through WebDriver (automation adds its
own overhead to each). The baseline is `--blank`: the app's window showing
an empty page (ui/blank.html, no script but the first-frame mark), sampled
for BLANK_SECONDS after start. The task is a support-desk episode: a
profile, the task, six tool runs, every records list, a refund and a
message. Each launch samples, every 50 ms, the app process and everything
it started (WebKitWebProcess, WebKitNetworkProcess), and keeps the peak
(the figure compared) and the last sample (settled):

- tree: what the process tree holds, each page once. Private pages of each
  process, plus each shared mapping (a library, WebKit's shared memory)
  counted once, at its largest resident size in the tree
  (/proc/<pid>/smaps). Pages the tree shares with other programs count
  fully, so the figure does not move when another WebKit app runs
  alongside. This is the figure asserted.
- PSS (proportional set size): shared pages split between every process on
  the machine that maps them, so it falls when other programs share the
  libraries.
- RSS: each process's resident pages, summed; a library shared by the
  three processes counts three times, which adds the same ~170 MB to both
  figures and so flatters the ratio (the issue's 821 MB was RSS).

Issue 15 asks for the task to hold at most 1.25 times the blank page; the
test asserts the bound reached so far (MAX_TREE_RATIO) so that a change
that brings memory back up fails.
"""

import json
import threading
import time
from pathlib import Path

from conftest import ARTIFACTS, App
from perf import descendants, look_up_and_open_ticket

BLANK_SECONDS = 4.0
# Measured on a 2-core Xvfb machine (WebKitGTK 2.50, Mesa llvmpipe) with
# WebKit painting on the CPU and JavaScriptCore without its JIT compilers
# (webview.rs): 1.42 and 1.54 in two runs, against 1.64 and 1.81 with the
# JITs (the full suite once reached 1.81 with them). Painting through
# OpenGL, the task held about 100 MB more (PSS 2.05x the blank page). With
# the app keeping only the worlds in use (world_shelf.rs), 1.42-1.50 in
# three runs (peak 427-432 MB; the blank page itself is 288 or 303 MB from
# run to run, which alone moves the ratio by 0.07). The target is 1.25:
# what is left is the page's code, text caches, JavaScript heap and
# WebKit's own allocations (see webview.rs for what was tried). The spread
# is wide, so the bound has a margin, and the settings themselves are
# asserted on the page process below.
MAX_TREE_RATIO = 1.70


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


def tree_kib(pids: list[int]) -> int:
    """Private pages of each process, plus each shared mapping once (its
    largest resident size among the processes), from /proc/<pid>/smaps."""
    private = 0
    shared: dict[str, int] = {}
    for p in pids:
        try:
            text = Path(f"/proc/{p}/smaps").read_text()
        except OSError:
            continue
        mine: dict[str, int] = {}
        key = ""
        for line in text.splitlines():
            fields = line.split()
            if not fields[0].endswith(":"):
                # A mapping's first line: range, perms, offset, device, inode[, path].
                # Anonymous mappings (inode 0, no path) are never shared between
                # these processes (WebKit's are started by exec, not fork).
                key = f"{fields[3]} {fields[4]} {fields[2]} {fields[5] if len(fields) > 5 else fields[0]}"
            elif fields[0] in ("Private_Clean:", "Private_Dirty:"):
                private += int(fields[1])
            elif fields[0] in ("Shared_Clean:", "Shared_Dirty:"):
                mine[key] = mine.get(key, 0) + int(fields[1])
        for k, v in mine.items():
            shared[k] = max(shared.get(k, 0), v)
    return private + sum(shared.values())


class Sampler:
    """Peak and last tree, PSS and RSS figures of a process tree, sampled
    in the background; and which phase the tree's peak fell in."""

    def __init__(self, root_pid: int):
        self.root = root_pid
        self.peak_tree = self.last_tree = self.peak_pss = self.last_pss = self.peak_rss = 0
        self._peak_mark = 0
        self.processes: dict[str, int] = {}
        self.phases: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            pids = descendants(self.root)
            tree = tree_kib(pids)
            by_process = {p: pss_kib(p) for p in pids}
            pss = sum(by_process.values())
            rss = sum(status_kib(p, "VmRSS:") for p in pids)
            self.last_tree, self.last_pss = tree, pss
            if tree > self.peak_tree:
                self.peak_tree, self._peak_mark = tree, len(self.phases)
                self.processes = {}
                for p, v in by_process.items():
                    try:
                        name = Path(f"/proc/{p}/comm").read_text().strip()
                    except OSError:
                        continue
                    self.processes[name] = self.processes.get(name, 0) + v
            self.peak_pss = max(self.peak_pss, pss)
            self.peak_rss = max(self.peak_rss, rss)
            time.sleep(0.05)

    def mark(self, phase: str):
        """The tree's figure now (after a moment for it to be sampled), at
        the end of `phase`: samples since the previous mark belong to it."""
        time.sleep(0.5)
        self.phases[phase] = round(self.last_tree / 1024, 1)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        mib = lambda kib: round(kib / 1024, 1)  # noqa: E731
        return {
            "peak_tree_mib": mib(self.peak_tree),
            "settled_tree_mib": mib(self.last_tree),
            "peak_in": (list(self.phases) + ["after the last phase"])[self._peak_mark] if self.phases else "start-up",
            "peak_pss_mib": mib(self.peak_pss),
            "settled_pss_mib": mib(self.last_pss),
            "peak_rss_mib": mib(self.peak_rss),
            "pss_mib_by_process_at_peak": {k: mib(v) for k, v in sorted(self.processes.items())},
            "tree_mib_by_phase": self.phases,
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
        # The page process runs as webview.rs asks: painting on the CPU,
        # JavaScript without the JIT compilers.
        pages = [p for p in descendants(app.pid()) if Path(f"/proc/{p}/comm").read_text().strip().startswith("WebKitWebProces")]
        assert pages, "the page process was not found"
        environ = dict(
            kv.split("=", 1) for kv in Path(f"/proc/{pages[0]}/environ").read_text(errors="replace").split("\0") if "=" in kv
        )
        assert environ.get("JSC_useJIT") == "false" and environ.get("WEBKIT_SKIA_ENABLE_CPU_RENDERING") == "1", {
            k: v for k, v in environ.items() if k.startswith(("JSC_", "WEBKIT_"))
        }
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
        "tree_ratio_peak": round(task_mem["peak_tree_mib"] / blank_mem["peak_tree_mib"], 2),
        "tree_ratio_settled": round(task_mem["settled_tree_mib"] / blank_mem["settled_tree_mib"], 2),
        "pss_ratio_peak": round(task_mem["peak_pss_mib"] / blank_mem["peak_pss_mib"], 2),
        "rss_ratio_peak": round(task_mem["peak_rss_mib"] / blank_mem["peak_rss_mib"], 2),
        "target_ratio": 1.25,
        "asserted_ratio": MAX_TREE_RATIO,
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "memory.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    assert blank_mem["peak_tree_mib"] > 0 and task_mem["peak_tree_mib"] > 0, report
    assert steps == n + 1
    assert report["tree_ratio_peak"] <= MAX_TREE_RATIO, (
        f"the task held {report['tree_ratio_peak']}x a blank page at its peak ({task_mem['peak_in']}); "
        f"it held at most {MAX_TREE_RATIO}x before: see artifacts/e2e/memory.json"
    )
