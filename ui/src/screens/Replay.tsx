import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { Decision } from "../bindings/Decision";
import type { ReplayView } from "../bindings/ReplayView";
import type { StepView } from "../bindings/StepView";
import type { TableDiff } from "../bindings/TableDiff";
import type { ToolInfo } from "../bindings/ToolInfo";
import { DecisionDialog } from "../components/DecisionDialog";
import { ErrorBanner } from "../components/ErrorBanner";
import { Kbd } from "../components/Kbd";
import { DiffTable } from "../components/ReviewDialog";
import { StepResult } from "../components/StepResult";
import { summary } from "../components/Timeline";
import { clockTime, dateTime, duration, plural } from "../lib/format";
import { DecisionButtons, statusChip } from "./ReviewQueue";

/** How many kept (not undone) steps there are up to and including `index`. */
export function keptUpTo(steps: StepView[], index: number): number {
  return steps.slice(0, index + 1).filter((s) => !s.retracted).length;
}

/** The keys that move through the steps: ↑/↓ or k/j, Home and End. */
export function stepKey(key: string, current: number, count: number): number | null {
  if (count === 0) return null;
  switch (key) {
    case "ArrowDown":
    case "j":
      return Math.min(count - 1, current + 1);
    case "ArrowUp":
    case "k":
      return Math.max(0, current - 1);
    case "Home":
      return 0;
    case "End":
      return count - 1;
    default:
      return null;
  }
}

/** Typing in a field keeps its keys (a list keeps its arrows too); the scrubber's are ours. */
function keptByField(target: EventTarget | null, key: string): boolean {
  const t = target as HTMLElement | null;
  if (!t) return false;
  if (t.tagName === "TEXTAREA" || t.isContentEditable) return true;
  if (t.tagName === "SELECT") return key !== "Escape";
  return t.tagName === "INPUT" && (t as HTMLInputElement).type !== "range";
}

function StateTables({ tables, testId }: { tables: TableDiff[] | undefined; testId: string }) {
  if (!tables) return <p className="muted small">Working out the records…</p>;
  if (tables.length === 0) return <p className="muted" data-testid={testId}>Nothing in the company's records had changed.</p>;
  return (
    <div className="diff" data-testid={testId}>
      {tables.map((t) => (
        <DiffTable key={t.table} diff={t} />
      ))}
    </div>
  );
}

function StepDetail({ step, previous, tools, number }: { step: StepView; previous: StepView | undefined; tools: ToolInfo[]; number: number }) {
  const s = summary(step, tools);
  const took = step.active_ms - (previous?.active_ms ?? 0);
  return (
    <section className="card replay-detail" data-testid="step-detail" aria-live="polite">
      <p className="eyebrow">
        Step {number}
        {step.retracted && " · undone by the expert"}
      </p>
      <h2 className="replay-step-title">{s.title}</h2>
      {s.detail && <p className="muted replay-step-args">{s.detail}</p>}
      <dl className="replay-facts">
        <div>
          <dt>Done at</dt>
          <dd>{clockTime(step.wall_at)}</dd>
        </div>
        <div>
          <dt>Took</dt>
          <dd>{duration(Math.max(0, took))}</dd>
        </div>
        <div>
          <dt>Into the task</dt>
          <dd>{duration(step.active_ms)}</dd>
        </div>
      </dl>
      <h3 className="review-h">Why</h3>
      {step.rationale ? (
        <blockquote className="final-message" data-testid="step-why">
          {step.rationale}
        </blockquote>
      ) : (
        <p className="muted small">No reason was noted.</p>
      )}
      {step.flag && <p className="banner banner-warn">Flagged: {step.flag}</p>}
      <h3 className="review-h">What came back</h3>
      <StepResult step={step} />
    </section>
  );
}

function sameAction(a: StepView | undefined, b: StepView | undefined): boolean {
  return !!a && !!b && JSON.stringify(a.action) === JSON.stringify(b.action);
}

/** Two runs of one task side by side: steps aligned by position, and what each changed in the end. */
function Compare({ left, right, onClose }: { left: ReplayView; right: ReplayView; onClose: () => void }) {
  const a = left.steps.filter((s) => !s.retracted);
  const b = right.steps.filter((s) => !s.retracted);
  const n = Math.max(a.length, b.length);
  const differ = Array.from({ length: n }, (_, i) => !sameAction(a[i], b[i])).filter(Boolean).length;
  const head = (v: ReplayView) => (
    <div className="compare-head">
      <strong>{v.episode.performer}</strong> {statusChip(v.episode.status)}
      <div className="muted small">
        {plural(v.episode.steps, "action")} · {duration(v.episode.active_ms)} worked
        {v.episode.submitted_at && ` · handed in ${dateTime(v.episode.submitted_at)}`}
      </div>
    </div>
  );
  return (
    <div className="compare" data-testid="compare">
      <div className="row space-between compare-bar">
        <p className="small" data-testid="compare-summary">
          {differ === 0
            ? "Both runs took the same actions in the same order."
            : `${differ} of ${plural(n, "step")} ${differ === 1 ? "differs" : "differ"}.`}{" "}
          <span className="muted">Undone steps are left out.</span>
        </p>
        <button type="button" className="btn btn-ghost btn-sm" onClick={onClose}>
          Stop comparing
        </button>
      </div>
      <div className="compare-scroll">
        <table className="compare-table">
          <thead>
            <tr>
              <th className="compare-n">#</th>
              <th>{head(left)}</th>
              <th>{head(right)}</th>
            </tr>
          </thead>
          <tbody>
            {Array.from({ length: n }, (_, i) => {
              const cell = (s: StepView | undefined, tools: ToolInfo[]) => {
                if (!s) return <span className="muted small">—</span>;
                const x = summary(s, tools);
                return (
                  <>
                    <div className="compare-step-title">{x.title}</div>
                    {x.detail && <div className="muted small compare-step-detail">{x.detail}</div>}
                  </>
                );
              };
              return (
                <tr key={i} className={sameAction(a[i], b[i]) ? "" : "compare-differs"} data-testid="compare-row">
                  <td className="compare-n muted small">{i + 1}</td>
                  <td>{cell(a[i], left.tools)}</td>
                  <td>{cell(b[i], right.tools)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        <div className="compare-finals">
          <section>
            <h3 className="review-h">What this run changed ({left.episode.performer})</h3>
            <StateTables tables={left.final_state} testId="compare-left-state" />
          </section>
          <section>
            <h3 className="review-h">What the compared run changed ({right.episode.performer})</h3>
            <StateTables tables={right.final_state} testId="compare-right-state" />
          </section>
        </div>
      </div>
    </div>
  );
}

/** One recording, step by step, in the manner of a trace viewer. */
export function Replay({ episodeId, onBack }: { episodeId: string; onBack: () => void }) {
  const [view, setView] = useState<ReplayView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [selected, setSelected] = useState(0);
  const [states, setStates] = useState<Record<number, TableDiff[]>>({});
  const [other, setOther] = useState<ReplayView | null>(null);
  const [deciding, setDeciding] = useState<Decision | null>(null);
  const listRef = useRef<HTMLOListElement>(null);

  const load = useCallback(async () => {
    try {
      setView(await api.openReplay(episodeId));
    } catch (e) {
      setError(e as AppError);
    }
  }, [episodeId]);
  useEffect(() => {
    void load();
  }, [load]);

  const steps = view?.steps ?? [];
  const step = steps[selected];
  const upto = keptUpTo(steps, selected);
  const kept = keptUpTo(steps, steps.length - 1);

  useEffect(() => {
    if (!view || upto in states) return;
    if (upto === kept) {
      setStates((s) => ({ ...s, [upto]: view.final_state }));
      return;
    }
    let live = true;
    api
      .replayState(view.episode.episode_id, upto)
      .then((state) => live && setStates((s) => ({ ...s, [state.upto]: state.tables })))
      .catch((e) => live && setError(e as AppError));
    return () => {
      live = false;
    };
  }, [view, upto, kept, states]);

  const go = useCallback(
    (i: number) => {
      setSelected(i);
      const list = listRef.current;
      const button = list?.querySelectorAll<HTMLButtonElement>("button")[i];
      button?.scrollIntoView?.({ block: "nearest" });
      if (list && list.contains(document.activeElement)) button?.focus();
    },
    [listRef],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (deciding || e.ctrlKey || e.metaKey || e.altKey || keptByField(e.target, e.key)) return;
      if (e.key === "Escape") {
        if (other) setOther(null);
        else onBack();
        return;
      }
      if (other) return;
      const next = stepKey(e.key, selected, steps.length);
      if (next === null) return;
      e.preventDefault();
      go(next);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [deciding, other, selected, steps.length, go, onBack]);

  const compareWith = async (id: string) => {
    if (!id) {
      setOther(null);
      return;
    }
    try {
      setOther(await api.openReplay(id));
    } catch (e) {
      setError(e as AppError);
    }
  };

  return (
    <div className="workspace replay" data-screen="replay">
      <header className="ws-header">
        <button type="button" className="btn btn-ghost btn-sm" onClick={onBack} data-testid="back-queue">
          ← Review queue <kbd className="kbd">Esc</kbd>
        </button>
        <div className="ws-title">
          <div className="ws-title-text">
            <div className="ws-task-title">
              <strong>{view?.episode.task_title ?? "Opening the recording…"}</strong>
            </div>
            {view && (
              <div className="muted small">
                {view.episode.world_name} · recorded by {view.episode.performer} · {plural(view.episode.steps, "action")} ·{" "}
                {duration(view.episode.active_ms)} worked
              </div>
            )}
          </div>
          {view && statusChip(view.episode.status)}
        </div>
        {view && view.others.length > 0 && (
          <label className="row gap-xs small">
            <span className="muted">Compare with</span>
            <select
              className="select-sm"
              value={other?.episode.episode_id ?? ""}
              onChange={(e) => void compareWith(e.target.value)}
              data-testid="compare-select"
            >
              <option value="">—</option>
              {view.others.map((o) => (
                <option key={o.episode_id} value={o.episode_id}>
                  {o.performer} ({o.status === "approved" ? "approved" : o.status === "rejected" ? "returned" : "waiting"})
                </option>
              ))}
            </select>
          </label>
        )}
        {view && (
          <div className="ws-controls">
            <DecisionButtons row={view.episode} reviewing onDecide={(_, d) => setDeciding(d)} />
          </div>
        )}
      </header>
      {error && (
        <div className="replay-banner">
          <ErrorBanner error={error} onDismiss={() => setError(null)} />
        </div>
      )}
      {view?.world_changed && (
        <p className="banner banner-warn replay-banner">
          This world's files have changed since the recording, so the records shown may differ from what the expert saw.
        </p>
      )}
      {view && other && <Compare left={view} right={other} onClose={() => setOther(null)} />}
      {view && !other && (
        <>
          <div className="replay-scrub">
            <input
              type="range"
              min={0}
              max={Math.max(0, steps.length - 1)}
              value={selected}
              onChange={(e) => go(Number(e.target.value))}
              aria-label="Step"
              aria-valuetext={`Step ${selected + 1} of ${steps.length}`}
              data-testid="scrubber"
              disabled={steps.length === 0}
            />
            <span className="small muted nowrap" data-testid="step-position">
              Step {steps.length === 0 ? 0 : selected + 1} of {steps.length}
            </span>
            <span className="small muted nowrap">
              <Kbd keys={["↑"]} /> <Kbd keys={["↓"]} /> or <Kbd keys={["J"]} /> <Kbd keys={["K"]} /> to step · <Kbd keys={["Home"]} />{" "}
              <Kbd keys={["End"]} />
            </span>
          </div>
          <div className="replay-grid">
            <nav className="panel replay-steps" aria-label="Steps">
              <ol ref={listRef} data-testid="replay-steps">
                {steps.map((s, i) => {
                  const x = summary(s, view.tools);
                  return (
                    <li key={s.idx}>
                      <button
                        type="button"
                        className={`replay-step${i === selected ? " active" : ""}${s.retracted ? " undone" : ""}${s.ok ? "" : " refused"}`}
                        aria-current={i === selected ? "step" : undefined}
                        onClick={() => go(i)}
                        data-testid="replay-step"
                      >
                        <span className="replay-step-n">{i + 1}</span>
                        <span className="replay-step-text">
                          <span className="replay-step-name">{x.title}</span>
                          <span className="muted small replay-step-sub">
                            {s.retracted ? "Undone" : s.ok ? x.detail || "Done" : "Refused"}
                          </span>
                        </span>
                      </button>
                    </li>
                  );
                })}
              </ol>
              {steps.length === 0 && <p className="muted small pad">This recording has no steps.</p>}
            </nav>
            <div className="replay-center">
              {step ? (
                <StepDetail step={step} previous={steps[selected - 1]} tools={view.tools} number={selected + 1} />
              ) : (
                <p className="muted">No step to show.</p>
              )}
              {view.final_message && (
                <section className="card replay-final">
                  <h3 className="review-h">Final message to the customer</h3>
                  <blockquote className="final-message">{view.final_message}</blockquote>
                </section>
              )}
            </div>
            <section className="panel replay-state" aria-labelledby="state-title">
              <header className="panel-header">
                <h2 id="state-title" className="panel-title">
                  {upto === 0 ? "Records before any change" : `Records after step ${selected + 1}`}
                </h2>
              </header>
              <div className="replay-state-body" data-testid="replay-state" data-upto={upto}>
                {step?.retracted && <p className="muted small">This step was undone, so it changed nothing.</p>}
                <StateTables tables={states[upto]} testId="replay-diff" />
              </div>
            </section>
          </div>
        </>
      )}
      {view && deciding && (
        <DecisionDialog
          row={view.episode}
          decision={deciding}
          onClose={() => setDeciding(null)}
          onDecide={async (comment) => {
            await api.decideEpisode(view.episode.episode_id, deciding, comment);
            setDeciding(null);
            await load();
          }}
        />
      )}
    </div>
  );
}
