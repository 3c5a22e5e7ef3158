import type { StepView } from "../bindings/StepView";
import { plainStepError } from "../lib/errors";
import { cell, isDataResult } from "../lib/format";
import { columnLabel } from "../lib/errors";

/** Structured result content: a record, a list of records, or a value;
 * fields are labelled with the world's words for them when given. */
export function DataView({ value, labels }: { value: unknown; labels?: Record<string, string> }) {
  if (Array.isArray(value)) {
    if (value.length === 0) return <p className="muted small">Nothing found.</p>;
    const rows = value.filter((r): r is Record<string, unknown> => !!r && typeof r === "object");
    if (rows.length === value.length) {
      const cols = Array.from(new Set(rows.flatMap((r) => Object.keys(r))));
      return (
        <div className="mini-table-wrap">
          <table className="mini-table">
            <thead>
              <tr>
                {cols.map((c) => (
                  <th key={c}>{columnLabel(c, labels)}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  {cols.map((c) => (
                    <td key={c}>{cell(r[c])}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    }
    return <pre className="result-text">{value.map(cell).join("\n")}</pre>;
  }
  if (value && typeof value === "object") {
    return (
      <dl className="record">
        {Object.entries(value as Record<string, unknown>).map(([k, v]) => (
          <div key={k} className="record-row">
            <dt>{columnLabel(k, labels)}</dt>
            <dd>{cell(v)}</dd>
          </div>
        ))}
      </dl>
    );
  }
  return <pre className="result-text">{cell(value)}</pre>;
}

/** The outcome of one step: the result, or the error in plain words. */
export function StepResult({ step, compact = false }: { step: StepView; compact?: boolean }) {
  if (!step.ok && step.error) {
    const e = plainStepError(step.error);
    return (
      <div className="result result-error" role="alert" data-testid="step-error">
        <div className="result-headline">
          <span className="result-icon" aria-hidden="true">
            !
          </span>
          {e.headline}
        </div>
        <p className="result-explanation">{e.explanation}</p>
        {!compact && e.advice && <p className="result-advice">{e.advice}</p>}
      </div>
    );
  }
  const json = isDataResult(step);
  return (
    <div className="result result-ok" data-testid="step-result">
      <div className="result-headline">
        <span className="result-icon" aria-hidden="true">
          ✓
        </span>
        {step.terminated ? "Done — this completed the task" : "Done"}
      </div>
      {json ? <DataView value={step.content} /> : <pre className="result-text">{step.text}</pre>}
    </div>
  );
}
