import { useRef, useState, type KeyboardEvent } from "react";
import type { DocProblem } from "../../bindings/DocProblem";
import { kindLabel } from "./CriterionForm";
import { str, type Fields } from "./fields";

export function pointsLabel(points: unknown): string {
  const p = typeof points === "number" ? points : points === undefined ? 1 : Number(points);
  if (Number.isNaN(p)) return "points?";
  if (p < 0) return `penalty −${Math.abs(p)}`;
  return `+${p} ${p === 1 ? "point" : "points"}`;
}

/**
 * The rubric's criteria as sentences. Keyboard: ↑/↓ move between them,
 * Enter opens one, Alt+↑/Alt+↓ move it up or down, Delete removes it.
 * Rows can also be dragged into place.
 */
export function CriterionList({
  criteria,
  sentences,
  problems,
  selected,
  onOpen,
  onMove,
  onDelete,
}: {
  criteria: Fields[];
  sentences: string[];
  problems: DocProblem[];
  selected: number | null;
  onOpen: (i: number) => void;
  onMove: (from: number, to: number) => void;
  onDelete: (i: number) => void;
}) {
  const list = useRef<HTMLOListElement>(null);
  const [dragging, setDragging] = useState<number | null>(null);
  const focusRow = (i: number) =>
    requestAnimationFrame(() => list.current?.querySelectorAll<HTMLElement>("[data-testid=criterion]")[i]?.focus());

  const onKey = (e: KeyboardEvent<HTMLLIElement>, i: number) => {
    if (e.target !== e.currentTarget) return;
    if (e.key === "Enter") {
      e.preventDefault();
      onOpen(i);
    } else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      e.preventDefault();
      const to = e.key === "ArrowUp" ? i - 1 : i + 1;
      if (to < 0 || to >= criteria.length) return;
      if (e.altKey) onMove(i, to);
      focusRow(to);
    } else if (e.key === "Delete") {
      e.preventDefault();
      onDelete(i);
      focusRow(Math.max(0, Math.min(i, criteria.length - 2)));
    }
  };

  return (
    <ol className="rl-list" ref={list} aria-label="Criteria">
      {criteria.map((c, i) => {
        const mine = problems.filter((p) => p.criterion === i);
        const points = typeof c.points === "number" ? c.points : 1;
        return (
          <li
            key={`${str(c.id)}-${i}`}
            className={`rl-row${selected === i ? " selected" : ""}${mine.length ? " rl-has-problem" : ""}${dragging === i ? " dragging" : ""}`}
            data-testid="criterion"
            data-id={str(c.id)}
            tabIndex={0}
            draggable
            aria-selected={selected === i}
            onKeyDown={(e) => onKey(e, i)}
            onDoubleClick={() => onOpen(i)}
            onDragStart={(e) => {
              setDragging(i);
              e.dataTransfer.effectAllowed = "move";
            }}
            onDragEnd={() => setDragging(null)}
            onDragOver={(e) => e.preventDefault()}
            onDrop={(e) => {
              e.preventDefault();
              if (dragging !== null && dragging !== i) onMove(dragging, i);
              setDragging(null);
            }}
          >
            <span className="rl-num" aria-hidden="true">
              {i + 1}
            </span>
            <div className="rl-body">
              <div className="rl-sentence" data-testid="sentence">
                {sentences[i] ?? str(c.id)}
              </div>
              <div className="rl-meta">
                <span className={`chip chip-xs ${points < 0 ? "chip-red" : "chip-green"}`} data-testid="points">
                  {pointsLabel(c.points)}
                </span>
                {c.gate === true && (
                  <span className="chip chip-xs chip-amber" title="If it does not hold, the whole score is 0">
                    Gate
                  </span>
                )}
                {c.required === false && <span className="chip chip-xs chip-grey">Nice to have</span>}
                {typeof c.section === "string" && c.section && <span className="chip chip-xs chip-outline">Group: {c.section}</span>}
                <span className="small muted">{kindLabel(c.kind)}</span>
              </div>
              {mine.map((p, j) => (
                <div key={j} className="rf-problem" role="alert">
                  {p.message}
                </div>
              ))}
            </div>
            <div className="rl-actions">
              <button type="button" className="btn btn-secondary btn-xs" onClick={() => onOpen(i)} data-testid="edit-criterion">
                Edit
              </button>
              <button
                type="button"
                className="btn btn-ghost btn-xs"
                aria-label="Move up"
                title="Move up (Alt+↑)"
                disabled={i === 0}
                onClick={() => onMove(i, i - 1)}
              >
                ↑
              </button>
              <button
                type="button"
                className="btn btn-ghost btn-xs"
                aria-label="Move down"
                title="Move down (Alt+↓)"
                disabled={i === criteria.length - 1}
                onClick={() => onMove(i, i + 1)}
              >
                ↓
              </button>
              <button type="button" className="btn btn-ghost btn-xs" onClick={() => onDelete(i)} data-testid="delete-criterion">
                Delete
              </button>
            </div>
          </li>
        );
      })}
    </ol>
  );
}
