import type { LintView } from "../../bindings/LintView";
import type { TryView } from "../../bindings/TryView";
import type { RunChoice } from "../../bindings/RunChoice";

function score(x: number): string {
  return Number.isInteger(x * 10) ? x.toFixed(1) : x.toFixed(2);
}

/** Lint: the progress while it runs, then what it found, survivors first. */
export function LintPanel({
  running,
  progress,
  result,
  sentenceOf,
  onLint,
  onOpenCriterion,
  onAddFor,
  disabled,
}: {
  running: boolean;
  progress: { done: number; total: number } | null;
  result: LintView | null;
  sentenceOf: (id: string) => string | null;
  onLint: () => void;
  onOpenCriterion: (id: string) => void;
  onAddFor: (cls: string) => void;
  disabled: boolean;
}) {
  const live = result?.survivors.filter((s) => !s.equivalent) ?? [];
  const equivalent = result?.survivors.filter((s) => s.equivalent) ?? [];
  return (
    <section className="card rw-panel" aria-labelledby="lint-title" data-testid="lint-panel">
      <header className="rw-panel-head">
        <h2 id="lint-title" className="card-title">
          Check the rubric
        </h2>
        <button type="button" className="btn btn-primary btn-sm" onClick={onLint} disabled={running || disabled} data-testid="lint">
          {running ? "Checking…" : result ? "Check again" : "Check the rubric"}
        </button>
      </header>
      <p className="small muted">
        Replays the gold run (it must score 1.0), doing nothing (it must score 0), and many wrong or sneaky versions of the gold run
        (each must score less).
      </p>
      {(running || progress) && (
        <div className="rw-progress" data-testid="lint-progress" data-done={!running} role="progressbar" aria-valuemin={0} aria-valuemax={progress?.total ?? 0} aria-valuenow={progress?.done ?? 0}>
          <div className="rw-progress-bar">
            <div className="rw-progress-fill" style={{ width: `${progress && progress.total ? (100 * progress.done) / progress.total : 3}%` }} />
          </div>
          <div className="small muted">
            {!progress
              ? "Starting…"
              : running
                ? `Run ${progress.done} of ${progress.total}`
                : `All ${progress.total} runs replayed and scored${result ? ` in ${(result.millis / 1000).toFixed(1)} s` : ""}`}
          </div>
        </div>
      )}
      {result && !running && (
        <div data-testid="lint-result" data-ok={result.ok}>
          <div className={`banner ${result.ok ? "banner-info" : "banner-warn"}`} data-testid="lint-verdict">
            {result.ok && live.length > 0
              ? `The rubric passes, but ${live.length === 1 ? "1 mistake still gets" : `${live.length} mistakes still get`} through (below): tighten it, or leave it if it does not matter.`
              : result.ok
              ? "The rubric passes: every mistake and trick tried was caught."
              : `The rubric does not pass yet: ${live.length === 1 ? "1 thing gets" : `${live.length} things get`} through${result.problems.length > live.length ? ", and there are other problems below" : ""}.`}
          </div>
          <ul className="rw-facts">
            {result.gold.map((g, i) => (
              <li key={i} className={g.best >= 0.999 ? "ok" : "bad"}>
                {g.best >= 0.999 ? "✓" : "✗"} The gold run ({g.source === "solution" ? "the reference solution" : g.source}) scores {score(g.best)}
              </li>
            ))}
            {result.do_nothing && (
              <li className={result.do_nothing.best <= 0.001 ? "ok" : "bad"}>
                {result.do_nothing.best <= 0.001 ? "✓" : "✗"} Doing nothing scores {score(result.do_nothing.best)}
              </li>
            )}
            <li className={result.mutation_score === null || result.mutation_score >= 0.9 ? "ok" : "bad"}>
              Caught {result.caught} of {result.mutants} mistakes in the gold run
              {result.mutation_score !== null && ` (${Math.round(result.mutation_score * 100)}%)`}
            </li>
          </ul>
          {live.length > 0 && (
            <>
              <h3 className="rw-sub">What gets through</h3>
              <ul className="rw-survivors">
                {live.map((s) => {
                  const target = s.criterion ? sentenceOf(s.criterion) : null;
                  return (
                    <li key={s.mutant_id}>
                      <button
                        type="button"
                        className="rw-survivor"
                        data-testid="survivor"
                        data-class={s.class}
                        data-mutant={s.mutant_id}
                        data-criterion={s.criterion ?? ""}
                        onClick={() => (s.criterion && target ? onOpenCriterion(s.criterion) : onAddFor(s.class))}
                      >
                        <span className="rw-survivor-text">{capitalize(s.sentence)}.</span>
                        <span className="small muted">
                          {s.criterion && target ? `Open the criterion that should catch it: “${target}”` : "No criterion checks this yet: add one"}
                        </span>
                      </button>
                    </li>
                  );
                })}
              </ul>
            </>
          )}
          {result.problems.length > 0 && (
            <details className="rw-details" open={live.length === 0}>
              <summary>All problems ({result.problems.length})</summary>
              <ul className="small">
                {result.problems.map((p, i) => (
                  <li key={i}>{p}</li>
                ))}
              </ul>
            </details>
          )}
          {result.classes.length > 0 && (
            <table className="rw-classes" data-testid="lint-classes">
              <caption className="small muted">Mistakes and tricks tried, by kind</caption>
              <tbody>
                {result.classes.map((c) => (
                  <tr key={c.class} data-class={c.class} className={c.caught < c.total ? "bad" : "ok"}>
                    <td>{c.label}</td>
                    <td className="num">
                      {c.caught} of {c.total} caught{c.equivalent > 0 ? ` · ${c.equivalent} harmless` : ""}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {equivalent.length > 0 && (
            <details className="rw-details">
              <summary>{equivalent.length} change(s) that end exactly where the gold run ends</summary>
              <ul className="small">
                {equivalent.map((s) => (
                  <li key={s.mutant_id}>
                    {capitalize(s.sentence)}: {s.equivalent}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>
      )}
    </section>
  );
}

function capitalize(s: string): string {
  return s ? s[0]!.toUpperCase() + s.slice(1) : s;
}

/** Try it: score one run and show what each criterion found. */
export function TryPanel({
  runs,
  run,
  onRun,
  onTry,
  result,
  busy,
  disabled,
}: {
  runs: RunChoice[];
  run: string;
  onRun: (id: string) => void;
  onTry: () => void;
  result: TryView | null;
  busy: boolean;
  disabled: boolean;
}) {
  return (
    <section className="card rw-panel" aria-labelledby="try-title" data-testid="try-panel">
      <header className="rw-panel-head">
        <h2 id="try-title" className="card-title">
          Try it on a run
        </h2>
      </header>
      {runs.length === 0 ? (
        <p className="small muted">No run of this task is stored yet.</p>
      ) : (
        <div className="rf-row">
          <select aria-label="Run to score" value={run} onChange={(e) => onRun(e.target.value)} data-testid="try-run">
            {runs.map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </select>
          <button type="button" className="btn btn-secondary btn-sm" onClick={onTry} disabled={busy || disabled} data-testid="try">
            {busy ? "Scoring…" : "Score it"}
          </button>
        </div>
      )}
      {result && (
        <div data-testid="try-result">
          <p>
            <strong>{result.run}</strong> scores {result.value === null ? "— (waiting for a person's grade)" : score(result.value)}
            {result.pass === true ? " and passes." : result.pass === false ? " and does not pass." : "."}
          </p>
          <ul className="rw-try">
            {result.criteria.map((c) => (
              <li key={c.id} className={c.met === null ? "" : (c.met === c.points >= 0) ? "ok" : "bad"} data-testid="try-criterion">
                <div>
                  <span aria-hidden="true">{c.met === null ? "…" : (c.met === c.points >= 0) ? "✓" : "✗"}</span> {c.sentence}
                </div>
                <div className="small muted">
                  {c.detail}
                  {c.steps.length > 0 && ` (step ${c.steps.join(", ")})`}
                </div>
                {c.excerpt && <blockquote className="small">“{c.excerpt}”</blockquote>}
                {c.rows.length > 0 && <code className="small mono rw-rows">{JSON.stringify(c.rows.slice(0, 3))}</code>}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
