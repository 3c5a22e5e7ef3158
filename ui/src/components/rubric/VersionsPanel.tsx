// The saved versions of a task's rubric, and what differs between two of
// them (criteria added, removed and changed, as sentences).
import { useEffect, useRef, useState } from "react";
import type { RubricComparison } from "../../bindings/RubricComparison";
import type { RubricVersion } from "../../bindings/RubricVersion";
import { pointsLabel } from "./CriterionList";

function when(v: RubricVersion): string {
  return v.saved_at.slice(0, 16).replace("T", " ");
}

function name(v: RubricVersion): string {
  return `Version ${v.version} · ${when(v)}`;
}

export interface VersionsPanelProps {
  /** Newest first, as the store lists them. */
  versions: RubricVersion[];
  compare: (from: number, to: number) => Promise<RubricComparison>;
}

export function VersionsPanel({ versions, compare }: VersionsPanelProps) {
  const [from, setFrom] = useState<number | null>(versions[1]?.id ?? null);
  const [to, setTo] = useState<number | null>(versions[0]?.id ?? null);
  const [result, setResult] = useState<RubricComparison | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const shown = useRef<HTMLDivElement>(null);
  // Bring the comparison into view: the panel sits below the fold.
  useEffect(() => {
    if (result) shown.current?.scrollIntoView?.({ block: "nearest" });
  }, [result]);
  const a = from ?? versions[1]?.id ?? null;
  const b = to ?? versions[0]?.id ?? null;
  const run = async () => {
    if (a === null || b === null) return;
    setBusy(true);
    setError(null);
    try {
      setResult(await compare(a, b));
    } catch (e) {
      setResult(null);
      setError((e as { message?: string }).message ?? String(e));
    } finally {
      setBusy(false);
    }
  };
  const picker = (label: string, value: number | null, set: (v: number) => void, testid: string) => (
    <label className="rv-pick">
      <span className="small muted">{label}</span>
      <select value={value ?? ""} onChange={(e) => { set(Number(e.target.value)); setResult(null); }} data-testid={testid}>
        {versions.map((v) => (
          <option key={v.id} value={v.id}>
            {name(v)}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section className="card rw-panel" data-testid="versions">
      <h2 className="card-title">Saved versions</h2>
      <ul className="small rw-versions">
        {versions.map((v) => (
          <li key={v.id}>
            {name(v)} · fingerprint {v.hash.slice(0, 12)}
          </li>
        ))}
      </ul>
      {versions.length > 1 && (
        <div className="rv-compare">
          <div className="rf-row">
            {picker("Compare", a, setFrom, "compare-from")}
            {picker("with", b, setTo, "compare-to")}
            <button type="button" className="btn btn-secondary btn-sm" onClick={() => void run()} disabled={busy || a === b} data-testid="compare">
              {busy ? "Comparing…" : "Compare"}
            </button>
          </div>
          {a === b && <div className="small muted">Choose two different versions.</div>}
          {error && (
            <div className="rf-problem" role="alert">
              {error}
            </div>
          )}
          <div ref={shown}>{result && <Comparison c={result} />}</div>
        </div>
      )}
    </section>
  );
}

/** What differs, in sentences. */
export function Comparison({ c }: { c: RubricComparison }) {
  const nothing = c.added.length + c.removed.length + c.changed.length + c.other.length === 0;
  return (
    <div className="rv-result" data-testid="comparison">
      <div className="small muted">
        From version {c.from_version} to version {c.to_version}: {c.added.length} added, {c.removed.length} removed, {c.changed.length} changed,{" "}
        {c.unchanged} the same.
      </div>
      {nothing && <p>The two versions grade alike and read alike.</p>}
      {c.added.length > 0 && (
        <>
          <h3 className="rv-head">Added</h3>
          <ul className="rv-list">
            {c.added.map((x) => (
              <li key={x.id} className="rv-added" data-testid="compare-added">
                <span>{x.sentence}</span> <span className="small muted">({pointsLabel(x.points)})</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {c.removed.length > 0 && (
        <>
          <h3 className="rv-head">Removed</h3>
          <ul className="rv-list">
            {c.removed.map((x) => (
              <li key={x.id} className="rv-removed" data-testid="compare-removed">
                <span>{x.sentence}</span> <span className="small muted">({pointsLabel(x.points)})</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {c.changed.length > 0 && (
        <>
          <h3 className="rv-head">Changed</h3>
          <ul className="rv-list">
            {c.changed.map((x) => (
              <li key={x.id} className="rv-changed" data-testid="compare-changed">
                <div>{x.after}</div>
                {x.before !== x.after && <div className="small muted">was: {x.before}</div>}
                <ul className="small">
                  {x.changes.map((d) => (
                    <li key={d}>{d}</li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </>
      )}
      {c.other.length > 0 && (
        <>
          <h3 className="rv-head">Also</h3>
          <ul className="rv-list small">
            {c.other.map((d) => (
              <li key={d}>{d}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
