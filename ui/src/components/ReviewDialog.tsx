import type { AppError } from "../bindings/AppError";
import type { ReviewView } from "../bindings/ReviewView";
import type { TableDiff } from "../bindings/TableDiff";
import { humanize } from "../lib/errors";
import { cell, duration } from "../lib/format";
import { Kbd } from "./Kbd";
import { Modal } from "./Modal";

/** A field as the expert reads it: labelled with the world's words for it
 * (`label`), else its name made readable; amounts kept in cents
 * ("refunded_cents": 7900) read as money ("Refunded": 79.00). */
export function readable(field: string, value: unknown, label?: string | null): { label: string; text: string } {
  if (field.endsWith("_cents") && (typeof value === "number" || value === null)) {
    return {
      label: label ?? humanize(field.slice(0, -"_cents".length)),
      text: typeof value === "number" ? (value / 100).toFixed(2) : cell(value),
    };
  }
  return { label: label ?? humanize(field), text: cell(value) };
}

/** One table's changes, record by record and field by field (before → after). */
export function DiffTable({ diff }: { diff: TableDiff }) {
  const sections: [string, string, typeof diff.added][] = [
    ["added", "New", diff.added],
    ["changed", "Changed", diff.changed],
    ["removed", "Removed", diff.removed],
  ];
  return (
    <section className="diff-table">
      <h4 data-table={diff.table}>{diff.label ?? humanize(diff.table)}</h4>
      {sections.map(([kind, label, records]) =>
        records.map((r) => (
          <div key={`${kind}-${r.key}`} className={`diff-record diff-${kind}`}>
            <div className="diff-record-head">
              <span className={`chip chip-xs ${kind === "added" ? "chip-green" : kind === "removed" ? "chip-red" : "chip-amber"}`}>
                {label}
              </span>
              <strong>{r.key}</strong>
            </div>
            <table className="diff-fields">
              <tbody>
                {r.fields.map((f) => (
                  <tr key={f.field}>
                    <th>{readable(f.field, f.after ?? f.before, f.label).label}</th>
                    {kind === "changed" ? (
                      <td>
                        <span className="diff-before">{readable(f.field, f.before).text}</span>
                        <span className="diff-arrow" aria-label="becomes">
                          →
                        </span>
                        <span className="diff-after">{readable(f.field, f.after).text}</span>
                      </td>
                    ) : (
                      <td>{readable(f.field, kind === "removed" ? f.before : f.after).text}</td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )),
      )}
    </section>
  );
}

/** What the episode changed and what was said, before submitting it. */
export function ReviewDialog({
  review,
  error,
  submitting,
  onSubmit,
  onCancel,
}: {
  review: ReviewView;
  error: AppError | null;
  submitting: boolean;
  onSubmit: () => void;
  onCancel: () => void;
}) {
  const warnings: string[] = [];
  if (review.messages_sent === 0) warnings.push("You have not written to the customer yet.");
  if (review.tables.length === 0) warnings.push("Nothing in the company's records was changed.");
  return (
    <Modal
      title="Review before submitting"
      onClose={onCancel}
      onConfirm={submitting ? undefined : onSubmit}
      width={820}
      testId="review"
      footer={
        <>
          <button type="button" className="btn btn-ghost" onClick={onCancel}>
            Back to work <kbd className="kbd">Esc</kbd>
          </button>
          <button
            type="button"
            className="btn btn-primary"
            onClick={onSubmit}
            disabled={submitting}
            data-testid="confirm-submit"
          >
            {submitting ? "Submitting…" : "Submit"} <Kbd keys={["Ctrl", "Enter"]} />
          </button>
        </>
      }
    >
      <div className="review">
        <dl className="review-stats">
          <div>
            <dt>Actions</dt>
            <dd>{review.steps_kept}</dd>
          </div>
          <div>
            <dt>Undone</dt>
            <dd>{review.steps_undone}</dd>
          </div>
          <div>
            <dt>Messages sent</dt>
            <dd>{review.messages_sent}</dd>
          </div>
          <div>
            <dt>Time worked</dt>
            <dd>{duration(review.active_ms)}</dd>
          </div>
        </dl>
        {warnings.map((w) => (
          <p key={w} className="banner banner-warn">
            {w}
          </p>
        ))}
        {error && <p className="banner banner-error">{error.message}</p>}
        <h3 className="review-h">Final message to the customer</h3>
        {review.final_message ? (
          <blockquote className="final-message" data-testid="final-message">
            {review.final_message}
          </blockquote>
        ) : (
          <p className="muted">No message was sent.</p>
        )}
        <h3 className="review-h">What changed in the company's records</h3>
        {review.tables.length === 0 ? (
          <p className="muted">No changes.</p>
        ) : (
          <div className="diff" data-testid="diff">
            {review.tables.map((t) => (
              <DiffTable key={t.table} diff={t} />
            ))}
          </div>
        )}
        <p className="muted small">
          Submitting hands this recording to reviewers. It cannot be changed afterwards.
        </p>
      </div>
    </Modal>
  );
}
