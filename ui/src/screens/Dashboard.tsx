import { useEffect, useMemo, useState } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { DashboardView } from "../bindings/DashboardView";
import type { DashboardTask } from "../bindings/DashboardTask";
import type { TaskDashboard } from "../bindings/TaskDashboard";
import { BackToTasks } from "../components/BackToTasks";
import { ErrorBanner } from "../components/ErrorBanner";
import { ExportDialog } from "../components/export/ExportDialog";
import { Bars, type Series } from "../components/grading/Bars";
import { JudgeAgreementPanel } from "../components/grading/JudgeAgreement";
import { ScreenBar } from "../components/ScreenBar";
import { plural } from "../lib/format";

const EXPERTS = "#2451a6";
const AGENTS = "#dc8a0b";

/** "0.93", "—" when there is nothing to average. */
function num(v: number | null): string {
  return v === null ? "—" : v.toFixed(2);
}

function pct(v: number | null): string {
  return v === null ? "—" : `${Math.round(v * 100)}%`;
}

/** The share of decided runs a criterion came out right, or null. */
export function rightShare(right: number, decided: number): number | null {
  return decided === 0 ? null : right / decided;
}

function Numbers({ d }: { d: TaskDashboard }) {
  return (
    <dl className="db-numbers" data-testid="dashboard-numbers">
      <div>
        <dt>Experts' runs</dt>
        <dd>{d.expert_runs}</dd>
      </div>
      <div>
        <dt>Agents' runs</dt>
        <dd>{d.agent_runs}</dd>
      </div>
      <div>
        <dt>Mean score, experts · agents</dt>
        <dd>
          {num(d.expert_mean)} · {num(d.agent_mean)}
        </dd>
      </div>
      <div>
        <dt>Passed, experts · agents</dt>
        <dd>
          {pct(d.expert_pass_rate)} · {pct(d.agent_pass_rate)}
        </dd>
      </div>
      <div>
        <dt>Waiting for a grade</dt>
        <dd>{d.pending}</dd>
      </div>
    </dl>
  );
}

/** A task's scores at a glance: distribution, criteria, pass^k. */
export function Dashboard({ onHome, exporting = false }: { onHome: () => void; exporting?: boolean }) {
  const [view, setView] = useState<DashboardView | null>(null);
  const [exportOpen, setExportOpen] = useState(exporting);
  const [error, setError] = useState<AppError | null>(null);
  const [task, setTask] = useState<[string, string] | null>(null);

  useEffect(() => {
    api
      .taskDashboard(task?.[0] ?? null, task?.[1] ?? null)
      .then(setView)
      .catch((e) => setError(e as AppError));
  }, [task]);

  useEffect(() => {
    if (exportOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onHome();
      else if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "e") {
        e.preventDefault();
        setExportOpen(true);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onHome, exportOpen]);

  const d = view?.scores ?? null;
  const charts = useMemo(() => {
    if (!d) return null;
    const distribution: Series[] = [
      { label: "Experts", values: d.bins.map((b) => b.experts), colour: EXPERTS },
      { label: "Agents", values: d.bins.map((b) => b.agents), colour: AGENTS },
    ];
    const criteria: Series[] = [
      { label: "Experts", values: d.criteria.map((c) => rightShare(c.experts_right, c.experts_decided)), colour: EXPERTS },
      { label: "Agents", values: d.criteria.map((c) => rightShare(c.agents_right, c.agents_decided)), colour: AGENTS },
    ];
    return {
      binLabels: d.bins.map((b) => `${b.low.toFixed(1)}–${b.high.toFixed(1)}`),
      distribution,
      criteriaLabels: d.criteria.map((c) => shorten(c.description, 56)),
      criteria,
      passK: [{ label: "Agents", values: d.agent_pass_k.map((p) => p.value), colour: AGENTS }] as Series[],
      passKLabels: d.agent_pass_k.map((p) => `${p.k} run${p.k === 1 ? "" : "s"}`),
    };
  }, [d]);

  const shownKey = view?.shown ? `${view.shown.world_id}/${view.shown.task_id}` : "";
  return (
    <div className="home queue" data-screen="dashboard">
      <ScreenBar sub="Scores">
        <button type="button" className="btn btn-secondary btn-sm" onClick={() => setExportOpen(true)} data-testid="open-export">
          Export a dataset… <kbd className="kbd">Ctrl E</kbd>
        </button>
        <BackToTasks onHome={onHome} />
      </ScreenBar>
      <main className="queue-main db-main">
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        <section className="card db-card" aria-labelledby="dashboard-title">
          <header className="picker-header queue-header">
            <div>
              <h2 id="dashboard-title" className="section-title">
                How the runs score
              </h2>
              <p className="muted small">
                {view ? plural(view.tasks.length, "task") + " with finished runs" : "Loading…"}. Every run is scored again under the
                task's current rubric, with the grades people gave.
              </p>
            </div>
            {view && view.tasks.length > 0 && (
              <label className="queue-filter">
                <span className="small muted">Task</span>
                <select
                  className="select-sm"
                  value={shownKey}
                  onChange={(e) => {
                    const [w, t] = e.target.value.split("/");
                    if (w && t) setTask([w, t]);
                  }}
                  data-testid="dashboard-task"
                >
                  {view.tasks.map((t) => (
                    <option key={`${t.world_id}/${t.task_id}`} value={`${t.world_id}/${t.task_id}`}>
                      {t.title} ({plural(t.runs, "run")})
                    </option>
                  ))}
                </select>
              </label>
            )}
          </header>
          {view && !d && <p className="muted pad">No task has finished runs and a rubric yet.</p>}
          {d && charts && (
            <div className="db-body">
              <Numbers d={d} />
              <div className="db-grid">
                <figure className="db-figure">
                  <figcaption>Scores of the runs</figcaption>
                  <Bars labels={charts.binLabels} series={charts.distribution} title="Runs" testId="chart-scores" height={220} />
                </figure>
                <figure className="db-figure">
                  <figcaption>pass^k: the chance that k runs of this task all pass (agents)</figcaption>
                  {d.agent_pass_k.length > 0 ? (
                    <Bars labels={charts.passKLabels} series={charts.passK} percent title="All pass" testId="chart-pass-k" height={220} />
                  ) : (
                    <p className="muted small">No agent run has a decided pass yet.</p>
                  )}
                </figure>
                <figure className="db-figure db-wide">
                  <figcaption>How often each criterion came out right</figcaption>
                  <Bars
                    labels={charts.criteriaLabels}
                    series={charts.criteria}
                    across
                    percent
                    title="Came out right"
                    testId="chart-criteria"
                    height={Math.max(160, d.criteria.length * 30 + 60)}
                  />
                </figure>
              </div>
              {view?.judge && <JudgeAgreementPanel judge={view.judge} testId="dashboard-judge" />}
            </div>
          )}
        </section>
        {view && view.tasks.length > 0 && <EffortPerTask tasks={view.tasks} />}
      </main>
      {exportOpen && <ExportDialog onClose={() => setExportOpen(false)} />}
    </div>
  );
}

/** The per-task effort charts: what each shows and where it reads it. */
const EFFORT_CHARTS = [
  { caption: "Gold runs", axis: "Gold runs", testId: "chart-gold", value: (t: DashboardTask) => t.gold },
  { caption: "Expert time (minutes)", axis: "Minutes", testId: "chart-expert-time", value: (t: DashboardTask) => t.expert_minutes },
];

/** `text` cut to `max` characters with an ellipsis, for a chart's labels. */
function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}…` : text;
}

/** Gold runs (approved experts' runs) and experts' active time, per task. */
function EffortPerTask({ tasks }: { tasks: DashboardTask[] }) {
  const labels = tasks.map((t) => shorten(t.title, 48));
  const height = Math.max(140, tasks.length * 28 + 60);
  return (
    <section className="card db-card" aria-labelledby="effort-title">
      <header className="picker-header queue-header">
        <div>
          <h2 id="effort-title" className="section-title">
            Gold and expert time, per task
          </h2>
          <p className="muted small">
            Gold is an expert's run a reviewer approved. Time is what experts spent working on their finished runs.
          </p>
        </div>
      </header>
      <div className="db-body">
        <div className="db-grid">
          {EFFORT_CHARTS.map((c) => (
            <figure className="db-figure" key={c.testId}>
              <figcaption>{c.caption}</figcaption>
              <Bars
                labels={labels}
                series={[{ label: c.axis, values: tasks.map(c.value), colour: EXPERTS }]}
                across
                title={c.axis}
                testId={c.testId}
                height={height}
              />
            </figure>
          ))}
        </div>
      </div>
    </section>
  );
}
