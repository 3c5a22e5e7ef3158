import { useState } from "react";
import type { AppError } from "../bindings/AppError";
import type { Decision } from "../bindings/Decision";
import type { QueueRow } from "../bindings/QueueRow";
import { Kbd } from "./Kbd";
import { Modal } from "./Modal";

/** What a reviewer must write before returning a recording. */
export const COMMENT_NEEDED =
  "Write what the expert should change: the recording goes back to them with your comment.";

/**
 * Approve or return one recording, with a comment for its expert (required
 * to return it). Ctrl+Enter confirms; the decision is final.
 */
export function DecisionDialog({
  row,
  decision,
  onDecide,
  onClose,
}: {
  row: QueueRow;
  decision: Decision;
  /** Records the decision; rejects with the app's error. */
  onDecide: (comment: string) => Promise<void>;
  onClose: () => void;
}) {
  const [comment, setComment] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const approve = decision === "approve";

  const confirm = async () => {
    if (!approve && !comment.trim()) {
      setProblem(COMMENT_NEEDED);
      return;
    }
    setSaving(true);
    setProblem(null);
    try {
      await onDecide(comment.trim());
    } catch (e) {
      setProblem((e as AppError).message);
      setSaving(false);
    }
  };

  return (
    <Modal
      title={approve ? "Approve this recording" : "Return this recording to its expert"}
      onClose={onClose}
      onConfirm={saving ? undefined : () => void confirm()}
      width={560}
      testId="decision"
      footer={
        <>
          <button type="button" className="btn btn-ghost" onClick={onClose}>
            Cancel <kbd className="kbd">Esc</kbd>
          </button>
          <button
            type="button"
            className={`btn ${approve ? "btn-primary" : "btn-danger"}`}
            onClick={() => void confirm()}
            disabled={saving}
            data-testid="confirm-decision"
          >
            {saving ? "Saving…" : approve ? "Approve" : "Return to expert"} <Kbd keys={["Ctrl", "Enter"]} />
          </button>
        </>
      }
    >
      <div className="stack">
        <p>
          <strong>{row.task_title}</strong>, recorded by <strong>{row.performer}</strong>.{" "}
          {approve
            ? "Approved recordings become the reference examples used for checking and training."
            : "The expert sees your comment on this task and can record it again."}
        </p>
        <label className="field">
          <span className="field-label">
            {approve ? "Comment for the expert (optional)" : "What should the expert change? (required)"}
          </span>
          <textarea
            name="comment"
            rows={4}
            autoFocus
            value={comment}
            aria-invalid={problem === COMMENT_NEEDED}
            onChange={(e) => {
              setComment(e.target.value);
              if (problem === COMMENT_NEEDED && e.target.value.trim()) setProblem(null);
            }}
            placeholder={approve ? "e.g. Clear and complete." : "e.g. Confirm the customer's identity before refunding."}
            data-testid="decision-comment"
          />
        </label>
        {problem && (
          <p className="form-error" role="alert" data-testid="decision-error">
            {problem}
          </p>
        )}
        <p className="muted small">A decision is final: it cannot be changed afterwards.</p>
      </div>
    </Modal>
  );
}
