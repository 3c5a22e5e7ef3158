import { useEffect, useMemo, useState, type ReactNode } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { ExpertProgress } from "../bindings/ExpertProgress";
import type { ProgressView } from "../bindings/ProgressView";
import { BackToTasks } from "../components/BackToTasks";
import { ErrorBanner } from "../components/ErrorBanner";
import { Bars, type Series } from "../components/grading/Bars";
import { ScreenBar } from "../components/ScreenBar";
import { dateTime, duration, plural } from "../lib/format";

const APPROVED = "#1f8a4c";
const WAITING = "#2451a6";
const RETURNED = "#c2410c";

/** Working time as people say it: "2 h 05 min", "12 min", "none yet". */
export function workTime(ms: number): string {
  if (ms <= 0) return "none yet";
  if (ms < 3_600_000) return `${Math.max(1, Math.round(ms / 60_000))} min`;
  return duration(ms);
}

/** The share of an expert's handed-in recordings that were approved. */
export function approvedShare(e: ExpertProgress): number | null {
  return e.done === 0 ? null : e.approved / e.done;
}

/** One part of the screen: a titled card. */
function Card({ id, title, sub, children }: { id: string; title: string; sub?: string; children: ReactNode }) {
  return (
    <section className="card db-card" aria-labelledby={id}>
      <header className="picker-header queue-header">
        <div>
          <h2 id={id} className="section-title">
            {title}
          </h2>
          {sub && <p className="muted small">{sub}</p>}
        </div>
      </header>
      {children}
    </section>
  );
}

function You({ show }: { show: boolean }) {
  return show ? <span className="chip chip-xs chip-blue">You</span> : null;
}

/** Each person's work: experts' recordings, reviewers' decisions, graders' runs. */
export function Progress({ onHome }: { onHome: () => void }) {
  const [view, setView] = useState<ProgressView | null>(null);
  const [error, setError] = useState<AppError | null>(null);

  useEffect(() => {
    api.peopleProgress().then(setView, (e) => setError(e as AppError));
  }, []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onHome();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onHome]);

  const p = view?.progress ?? null;
  const me = view?.me ?? null;
  const reviewers = useMemo(() => (p ? p.reviewers.filter((r) => r.reviewed > 0 || r.id === me) : []), [p, me]);
  const charts = useMemo(() => {
    if (!p) return null;
    const names = p.experts.map((e) => (e.id === me ? `${e.name} (you)` : e.name));
    const recordings: Series[] = [
      { label: "Approved", values: p.experts.map((e) => e.approved), colour: APPROVED },
      { label: "Waiting for review", values: p.experts.map((e) => e.waiting), colour: WAITING },
      { label: "Returned", values: p.experts.map((e) => e.returned), colour: RETURNED },
    ];
    const hours: Series[] = [{ label: "Hours", values: p.experts.map((e) => Math.round((e.active_ms / 3_600_000) * 100) / 100), colour: WAITING }];
    return { names, recordings, hours };
  }, [p, me]);

  return (
    <div className="home queue" data-screen="progress">
      <ScreenBar sub="Progress">
        <BackToTasks onHome={onHome} />
      </ScreenBar>
      <main className="queue-main db-main">
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        <Card
          id="experts-title"
          title="Experts' recordings"
          sub={p ? `${plural(p.experts.length, "expert")} · ${plural(p.waiting, "recording")} waiting for review` : "Loading…"}
        >
          {p && p.experts.length === 0 && <p className="muted pad">Nobody has recorded a task yet.</p>}
          {p && charts && p.experts.length > 0 && (
            <div className="db-body">
              <div className="db-grid">
                <figure className="db-figure">
                  <figcaption>What reviewers made of each expert's recordings</figcaption>
                  <Bars labels={charts.names} series={charts.recordings} title="Recordings" testId="chart-recordings" height={220} />
                </figure>
                <figure className="db-figure">
                  <figcaption>Time spent recording (pauses left out)</figcaption>
                  <Bars labels={charts.names} series={charts.hours} title="Hours" testId="chart-hours" height={220} />
                </figure>
              </div>
              <table className="gr-table pr-table" data-testid="expert-progress">
                <thead>
                  <tr>
                    <th>Expert</th>
                    <th>Handed in</th>
                    <th>Approved</th>
                    <th>Waiting</th>
                    <th>Returned</th>
                    <th>Open</th>
                    <th>Tasks</th>
                    <th>Time</th>
                    <th>Last worked</th>
                  </tr>
                </thead>
                <tbody>
                  {p.experts.map((e) => (
                    <tr key={e.id} data-expert={e.id} data-me={e.id === me} data-testid="expert-row">
                      <td>
                        {e.name} <You show={e.id === me} />
                      </td>
                      <td data-testid="expert-done">{e.done}</td>
                      <td data-testid="expert-approved">{e.approved}</td>
                      <td>{e.waiting}</td>
                      <td data-testid="expert-returned">{e.returned}</td>
                      <td>{e.in_progress}</td>
                      <td>{e.tasks}</td>
                      <td>{workTime(e.active_ms)}</td>
                      <td className="muted small">{e.last_active ? dateTime(e.last_active) : "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>
        <Card id="reviewers-title" title="Reviewers">
          {p && reviewers.length === 0 && <p className="muted pad">Nobody has reviewed a recording yet.</p>}
          {reviewers.length > 0 && (
            <div className="pr-pad">
            <table className="gr-table pr-table" data-testid="reviewer-progress">
              <thead>
                <tr>
                  <th>Reviewer</th>
                  <th>Reviewed</th>
                  <th>Approved</th>
                  <th>Returned</th>
                  <th>Waiting for them</th>
                  <th>Last review</th>
                </tr>
              </thead>
              <tbody>
                {reviewers.map((r) => (
                  <tr key={r.id} data-reviewer={r.id} data-testid="reviewer-row">
                    <td>
                      {r.name} <You show={r.id === me} />
                    </td>
                    <td data-testid="reviewer-reviewed">{r.reviewed}</td>
                    <td>{r.approved}</td>
                    <td>{r.returned}</td>
                    <td data-testid="reviewer-pending">{r.pending}</td>
                    <td className="muted small">{r.last_review ? dateTime(r.last_review) : "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            </div>
          )}
        </Card>
        {p && p.graders.length > 0 && (
          <Card id="graders-title" title="Graders of agent runs">
            <div className="pr-pad">
            <table className="gr-table pr-table" data-testid="grader-progress">
              <thead>
                <tr>
                  <th>Grader</th>
                  <th>Asked to grade</th>
                  <th>Done</th>
                  <th>Still to do</th>
                </tr>
              </thead>
              <tbody>
                {p.graders.map((g) => (
                  <tr key={g.id} data-grader={g.id} data-testid="grader-row">
                    <td>
                      {g.name} <You show={g.id === me} />
                    </td>
                    <td>{g.assigned}</td>
                    <td>{g.done}</td>
                    <td>{g.assigned - g.done}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            </div>
          </Card>
        )}
      </main>
    </div>
  );
}
