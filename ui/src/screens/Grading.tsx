import { useCallback, useEffect, useMemo, useState } from "react";
import { open } from "@tauri-apps/plugin-dialog";
import { api } from "../api";
import type { AgreementView } from "../bindings/AgreementView";
import type { AppError } from "../bindings/AppError";
import type { GradingRow } from "../bindings/GradingRow";
import type { GradingView } from "../bindings/GradingView";
import type { ImportView } from "../bindings/ImportView";
import { ActingAs, ScreenBar } from "../components/ScreenBar";
import { ErrorBanner } from "../components/ErrorBanner";
import { AgreementChart } from "../components/grading/AgreementChart";
import { JudgeAgreementPanel } from "../components/grading/JudgeAgreement";
import { describe, methodName, tone } from "../lib/agreement";
import { dateTime, plural } from "../lib/format";

/** What importing a file did: stored, or refused with its problems by line. */
export function ImportResult({ result, onDismiss }: { result: ImportView; onDismiss: () => void }) {
  const name = result.file.split(/[\\/]/).pop() ?? result.file;
  if (result.problems.length === 0) {
    return (
      <div className="banner banner-info" role="status" data-testid="import-done">
        <div className="banner-body">
          <strong>Imported {plural(result.stored, "agent run")}</strong> ({plural(result.steps, "step")}) from {name}.
          {result.warnings.map((w) => (
            <div key={w} className="small muted">
              {w}
            </div>
          ))}
        </div>
        <button type="button" className="btn btn-ghost btn-sm" onClick={onDismiss}>
          Dismiss
        </button>
      </div>
    );
  }
  return (
    <div className="banner banner-error gr-problems" role="alert" data-testid="import-problems">
      <div className="banner-body">
        <strong>Nothing was imported.</strong> {name} has {plural(result.problems.length, "problem")}; fix{" "}
        {result.problems.length === 1 ? "it" : "them"} and import the file again.
        <ul>
          {result.problems.map((p, i) => (
            <li key={i} data-testid="import-problem" data-line={p.line ?? ""}>
              {p.line !== null && <strong>Line {p.line}: </strong>}
              {p.message}
            </li>
          ))}
        </ul>
      </div>
      <button type="button" className="btn btn-ghost btn-sm" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

/** Who grades one run, and asking one more person. */
function Graders({ row, view, onAssign }: { row: GradingRow; view: GradingView; onAssign: (graderId: string) => void }) {
  const [pick, setPick] = useState("");
  const others = view.experts.filter((e) => !row.graders.some((g) => g.id === e.id));
  return (
    <div className="gr-graders">
      {row.graders.length === 0 ? (
        <span className="muted small">Nobody is grading this yet</span>
      ) : (
        row.graders.map((g) => (
          <span key={g.id} className={`chip chip-xs ${g.done ? "chip-green" : "chip-grey"}`} data-testid="grader" data-done={g.done}>
            {g.name}
            {g.done ? " · done" : " · grading"}
          </span>
        ))
      )}
      {others.length > 0 && (
        <span className="row gap-xs">
          <select
            className="select-sm"
            value={pick}
            onChange={(e) => setPick(e.target.value)}
            aria-label={`Ask someone to grade the run by ${row.model}`}
            data-testid="assign-select"
          >
            <option value="">Ask someone to grade…</option>
            {others.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name}
              </option>
            ))}
          </select>
          <button
            type="button"
            className="btn btn-ghost btn-sm"
            disabled={!pick}
            onClick={() => {
              onAssign(pick);
              setPick("");
            }}
            data-testid="assign"
          >
            Assign
          </button>
        </span>
      )}
    </div>
  );
}

/** How much the graders of one task agree: the headline, a chart, a table. */
export function AgreementPanel({ agreement }: { agreement: AgreementView }) {
  const r = agreement.report;
  return (
    <div className="gr-agreement" data-testid="agreement-panel">
      <div className="gr-agreement-head">
        <div>
          <div className="small muted">
            Whole rubric · {methodName(r.rubric.method)}
            {agreement.grader_names.length > 0 && <> · graders: {agreement.grader_names.join(", ")}</>}
          </div>
          <div
            className={r.rubric.value === null ? "gr-none" : `gr-big gr-tone-${tone(r.rubric.value)}`}
            data-testid="agreement-value"
          >
            {describe(r.rubric)}
          </div>
          {r.rubric.percent !== null && (
            <div className="small muted">
              They gave the same grade {Math.round(r.rubric.percent * 100)}% of the time, over {plural(r.rubric.items, "graded item")} (a
              criterion of a run).
            </div>
          )}
        </div>
        <p className="small muted gr-legend">
          1 means the graders always agree; 0 is what chance alone would give; below 0, they disagree more than chance. Two graders:
          Cohen's κ; three or more: Krippendorff's α.
        </p>
      </div>
      {r.graders.length >= 2 && <AgreementChart criteria={r.criteria} />}
      {r.graders.length >= 2 && (
      <table className="gr-table" data-testid="agreement-table">
        <thead>
          <tr>
            <th>Criterion</th>
            <th>Agreement</th>
            <th>Same grade</th>
          </tr>
        </thead>
        <tbody>
          {r.criteria.map((c) => (
            <tr key={c.id} data-criterion={c.id}>
              <td>
                {c.description}
                {c.judged && <span className="chip chip-xs chip-blue gr-inline-chip">judged</span>}
              </td>
              <td className={`gr-tone-${tone(c.agreement.value)}`}>
                {c.agreement.value === null ? (
                  <span className="muted" title={c.agreement.note ?? undefined}>
                    —
                  </span>
                ) : (
                  describe(c.agreement)
                )}
              </td>
              <td>{c.agreement.percent === null ? "—" : `${Math.round(c.agreement.percent * 100)}%`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      )}
      {r.graders.length >= 2 && r.criteria.some((c) => c.agreement.value === null) && (
        <p className="small muted gr-legend" data-testid="agreement-dash">
          — : not measurable yet. Every grade of that criterion was the same, or no run of it was graded twice; grade more runs to
          measure it.
        </p>
      )}
      <JudgeAgreementPanel judge={agreement.judge} />
    </div>
  );
}

/** The grader's list: agent runs by task, importing more, and agreement. */
export function Grading({ onHome, onGrade }: { onHome: () => void; onGrade: (episodeId: string) => void }) {
  const [view, setView] = useState<GradingView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [imported, setImported] = useState<ImportView | null>(null);
  const [importing, setImporting] = useState(false);
  const [task, setTask] = useState("");
  const [agreement, setAgreement] = useState<AgreementView | null>(null);

  const refresh = useCallback(async () => {
    try {
      setView(await api.gradingRuns());
    } catch (e) {
      setError(e as AppError);
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  const importFile = useCallback(async () => {
    setError(null);
    const path = await open({
      title: "Import agent runs",
      multiple: false,
      directory: false,
      filters: [{ name: "Agent runs (JSON lines)", extensions: ["jsonl", "json"] }],
    });
    if (typeof path !== "string") return;
    setImporting(true);
    try {
      setImported(await api.importAgentRuns(path));
      await refresh();
    } catch (e) {
      setError(e as AppError);
    } finally {
      setImporting(false);
    }
  }, [refresh]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onHome();
      else if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "i") {
        e.preventDefault();
        void importFile();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onHome, importFile]);

  const rows = view?.runs ?? [];
  const groups = useMemo(() => {
    const out = new Map<string, GradingRow[]>();
    for (const r of rows) {
      const key = `${r.world_id}/${r.task_id}`;
      out.set(key, [...(out.get(key) ?? []), r]);
    }
    return out;
  }, [rows]);
  const gradable = [...groups.entries()].filter(([, g]) => g[0]?.has_rubric);
  const shownTask = task || gradable[0]?.[0] || "";

  useEffect(() => {
    if (!shownTask) {
      setAgreement(null);
      return;
    }
    const [worldId, taskId] = shownTask.split("/");
    if (!worldId || !taskId) return;
    api
      .gradingAgreement(worldId, taskId)
      .then(setAgreement)
      .catch((e) => setError(e as AppError));
  }, [shownTask, view]);

  const me = view?.grader?.id;
  return (
    <div className="home queue" data-screen="grading">
      <ScreenBar sub="Grading">
        <ActingAs role="Grading" name={view?.grader?.name} testId="grader-name" none="No profile chosen: choose one on the start screen to grade" onHome={onHome} />
      </ScreenBar>
      <main className="queue-main gr-main">
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        {imported && <ImportResult result={imported} onDismiss={() => setImported(null)} />}
        <section className="card queue-card" aria-labelledby="grading-title">
          <header className="picker-header queue-header">
            <div>
              <h2 id="grading-title" className="section-title">
                Agent runs to grade
              </h2>
              <p className="muted small">{view ? plural(rows.length, "agent run") : "Loading…"}</p>
            </div>
            <button
              type="button"
              className="btn btn-primary btn-sm"
              onClick={() => void importFile()}
              disabled={importing}
              data-testid="import-runs"
            >
              {importing ? "Importing…" : "Import agent runs…"} <kbd className="kbd">Ctrl I</kbd>
            </button>
          </header>
          <div className="queue-body">
            {view && rows.length === 0 && (
              <p className="muted pad" data-testid="grading-empty">
                No agent runs yet. Import a file of agent runs (the .jsonl that <code>understudy export --format native</code> writes) to
                grade them.
              </p>
            )}
            {[...groups.entries()].map(([key, group]) => (
              <section key={key} className="queue-group" data-group={key}>
                <h3 className="queue-group-title">
                  {group[0]?.task_title}{" "}
                  <span className="muted small">
                    {group[0]?.world_name} · {plural(group.length, "run")}
                    {!group[0]?.has_rubric && " · no rubric yet, so it cannot be graded"}
                  </span>
                </h3>
                <ul className="queue-list">
                  {group.map((r) => {
                    const mine = r.graders.find((g) => g.id === me);
                    return (
                      <li key={r.episode_id} className="queue-row" data-testid="grading-row" data-episode={r.episode_id}>
                        <div className="queue-text">
                          <div className="queue-who">
                            Agent: {r.model}
                            {mine && (
                              <span className="chip chip-xs chip-blue">{mine.done ? "You are done" : "Assigned to you"}</span>
                            )}
                          </div>
                          <div className="muted small">
                            Ran {dateTime(r.created_at)} · {plural(r.steps, "action")}
                          </div>
                          {view && <Graders row={r} view={view} onAssign={(id) => void api.assignGrader(r.episode_id, id).then(setView, (e) => setError(e as AppError))} />}
                        </div>
                        <div className="row gap-xs queue-actions">
                          <button
                            type="button"
                            className="btn btn-secondary btn-sm"
                            disabled={!r.has_rubric || !view?.grader}
                            onClick={() => onGrade(r.episode_id)}
                            data-testid="open-grading"
                            aria-label={`Grade the run by ${r.model}: ${r.task_title}`}
                          >
                            {mine?.done ? "Open grades" : "Grade"}
                          </button>
                        </div>
                      </li>
                    );
                  })}
                </ul>
              </section>
            ))}
          </div>
        </section>
        {gradable.length > 0 && (
          <section className="card gr-agreement-card" aria-labelledby="agreement-title">
            <header className="picker-header queue-header">
              <h2 id="agreement-title" className="section-title">
                Do the graders agree?
              </h2>
              <label className="queue-filter">
                <span className="small muted">Task</span>
                <select className="select-sm" value={shownTask} onChange={(e) => setTask(e.target.value)} data-testid="agreement-task">
                  {gradable.map(([key, g]) => (
                    <option key={key} value={key}>
                      {g[0]?.task_title}
                    </option>
                  ))}
                </select>
              </label>
            </header>
            {agreement ? <AgreementPanel agreement={agreement} /> : <p className="muted pad">Loading…</p>}
          </section>
        )}
      </main>
    </div>
  );
}
