import type { Consensus } from "../bindings/Consensus";
import type { ConsensusView } from "../bindings/ConsensusView";
import { columnLabel } from "../lib/errors";
import { argsSummary, cell, dateTime, plural } from "../lib/format";

/** The one-sentence summary a reviewer reads before approving. */
export function consensusSummary(c: Consensus, names: string[]): string {
  const who = names.join(", ");
  if (c.unanimous) {
    return `${plural(c.runs.length, "run")} (${who}) end the same way and made the same tool calls.`;
  }
  return (
    `${plural(c.runs.length, "run")} (${who}): the same final value on ${c.fields_agreed} of ${plural(c.fields.length, "changed field")}, ` +
    `and ${c.actions_agreed} of ${plural(c.actions.length, "tool call")} made by everyone.`
  );
}

/** A value, or for a whole record "added: amount 7900 · …" / "absent". */
function recordCell(v: unknown, field: string): string {
  if (field !== "(whole record)") return cell(v);
  if (v === null || v === undefined) return "absent";
  return `present: ${argsSummary(v as Record<string, unknown>)}`;
}

/** Where experts' runs of one task end differently or act differently. */
export function ConsensusPanel({ view, onClose }: { view: ConsensusView; onClose: () => void }) {
  const c = view.consensus;
  const names = view.runs.map((r) => r.performer);
  const heads = view.runs.map((r) => (
    <th key={r.episode_id}>
      {r.performer}
      {r.submitted_at && <div className="small muted">{dateTime(r.submitted_at)}</div>}
    </th>
  ));
  return (
    <div className="cs-panel" data-testid="consensus">
      <div className="row gap-sm cs-head">
        <p className={`cs-summary ${c.unanimous ? "gr-tone-green" : ""}`} data-testid="consensus-summary">
          {consensusSummary(c, names)}
        </p>
        <button type="button" className="btn btn-ghost btn-sm" onClick={onClose}>
          Close
        </button>
      </div>
      {c.fields.length > 0 && (
        <table className="gr-table cs-table" data-testid="consensus-fields">
          <caption className="small muted">How each run left the records it changed (differences first)</caption>
          <thead>
            <tr>
              <th>Record</th>
              <th>Field</th>
              <th>Before</th>
              {heads}
            </tr>
          </thead>
          <tbody>
            {c.fields.map((f) => (
              <tr key={`${f.table}/${f.key}/${f.field}`} className={f.agreed ? undefined : "cs-differs"} data-agreed={f.agreed}>
                <td>
                  {columnLabel(f.table, view.table_titles)} {f.key}
                </td>
                <td>{f.field === "(whole record)" ? "the record" : columnLabel(f.field, view.column_labels[f.table])}</td>
                <td className="muted">{recordCell(f.before, f.field)}</td>
                {f.values.map((v, i) => (
                  <td key={i}>{recordCell(v, f.field)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {c.actions.length > 0 && (
        <table className="gr-table cs-table" data-testid="consensus-actions">
          <caption className="small muted">Tool calls, and who made them (differences first)</caption>
          <thead>
            <tr>
              <th colSpan={3}>Call</th>
              {heads}
            </tr>
          </thead>
          <tbody>
            {c.actions.map((a, n) => (
              <tr key={n} className={a.agreed ? undefined : "cs-differs"} data-agreed={a.agreed}>
                <td colSpan={3}>
                  <strong>{columnLabel(a.tool, view.tool_titles)}</strong> <span className="small muted">{argsSummary(a.args)}</span>
                </td>
                {a.runs.map((made, i) => (
                  <td key={i} aria-label={made ? "made this call" : "did not"}>
                    {made ? "✓" : "—"}
                  </td>
                ))}
              </tr>
            ))}
            <tr>
              <td colSpan={3} className="muted">
                Messages to the customer (not compared: everyone words them differently)
              </td>
              {c.messages.map((m, i) => (
                <td key={i}>{m}</td>
              ))}
            </tr>
          </tbody>
        </table>
      )}
    </div>
  );
}
