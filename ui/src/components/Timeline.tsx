import { memo, useEffect, useRef, useState } from "react";
import type { StepView } from "../bindings/StepView";
import type { ToolInfo } from "../bindings/ToolInfo";
import type { ViewInfo } from "../bindings/ViewInfo";
import { columnLabel, plainStepError } from "../lib/errors";
import { argsSummary, clockTime, duration, isDataResult, isMessage, listingSummary, toolTitle } from "../lib/format";
import { StepResult } from "./StepResult";

const DEFAULT_FLAG = "Needs a second look";

/** What a step did, as a title and a line of detail (also the replay view's step list). */
export function summary(step: StepView, tools: ToolInfo[]): { title: string; detail: string; kind: string } {
  const action = step.action;
  if (isMessage(action)) return { title: "Message to the customer", detail: action.message, kind: "message" };
  const tool = tools.find((t) => t.name === action.tool);
  const args = { ...action.args };
  let title = toolTitle(tools, action.tool);
  if (tool?.view) {
    if ("key" in args) {
      title = `Opened ${String(args.key)}`;
      delete args.key;
      return { title, detail: argsSummary(args), kind: "view" };
    }
    return { title: `Looked through ${tool.title}`, detail: listingSummary(args), kind: "view" };
  }
  return { title, detail: argsSummary(args), kind: tool?.kind ?? "write" };
}

/** Grows the rationale box with its text (about 38 characters a line). */
function rowsFor(text: string): number {
  const lines = text.split("\n").reduce((n, l) => n + Math.max(1, Math.ceil(l.length / 38)), 0);
  return Math.min(8, Math.max(1, lines));
}

/** One line saying what came of a successful step; a record's fields are
 * named with the world's labels (`labels`) when given. */
export function resultLine(step: StepView, labels?: Record<string, string>): string {
  if (isMessage(step.action)) return step.text ? `Customer replied: ${step.text}` : "Sent.";
  const c = step.content as Record<string, unknown> | unknown[] | null;
  if (c && typeof c === "object" && !Array.isArray(c) && Array.isArray(c.rows) && typeof c.total === "number") {
    return c.total === 1 ? "1 record" : `${c.total} records`;
  }
  if (!isDataResult(step)) return step.text.split("\n")[0] ?? "";
  if (Array.isArray(c)) return c.length === 1 ? "1 result" : `${c.length} results`;
  if (c && typeof c === "object") {
    return Object.entries(c)
      .filter(([, v]) => v !== null && typeof v !== "object")
      .slice(0, 3)
      .map(([k, v]) => `${columnLabel(k, labels)}: ${String(v)}`)
      .join(" · ");
  }
  return step.text;
}

/** One step: what was done, what came of it, and the expert's notes. */
const Entry = memo(function Entry({
  step,
  number,
  tools,
  labels,
  editable,
  onAnnotate,
}: {
  step: StepView;
  number: number | null;
  tools: ToolInfo[];
  /** The world's labels of the fields this step's result shows. */
  labels?: Record<string, string>;
  editable: boolean;
  onAnnotate: (idx: number, rationale: string | null, flag: string | null) => Promise<void>;
}) {
  const s = summary(step, tools);
  const [open, setOpen] = useState(false);
  const [why, setWhy] = useState(step.rationale ?? "");
  const [flag, setFlag] = useState(step.flag ?? "");
  const [saved, setSaved] = useState<"idle" | "saving" | "saved">("idle");
  useEffect(() => setWhy(step.rationale ?? ""), [step.rationale]);
  useEffect(() => setFlag(step.flag ?? ""), [step.flag]);

  const save = async (rationale: string, flagText: string) => {
    setSaved("saving");
    try {
      await onAnnotate(step.idx, rationale.trim() || null, flagText.trim() || null);
      setSaved("saved");
    } catch {
      setSaved("idle");
    }
  };
  const flagged = !!step.flag;
  const result = step.ok ? resultLine(step, labels) : step.error ? plainStepError(step.error).explanation : "";
  return (
    <li
      className={`tl-entry tl-${s.kind}${step.ok ? "" : " tl-failed"}${step.retracted ? " tl-retracted" : ""}${flagged ? " tl-flagged" : ""}`}
      data-idx={step.idx}
      data-testid="timeline-entry"
    >
      <div className="tl-marker" aria-hidden="true">
        {number ?? "–"}
      </div>
      <div className="tl-content">
        <div className="tl-head">
          <button type="button" className="tl-title" onClick={() => setOpen(!open)} aria-expanded={open}>
            {s.title}
          </button>
          {step.retracted && <span className="chip chip-grey chip-xs">Undone</span>}
          {!step.ok && !step.retracted && <span className="chip chip-red chip-xs">Refused</span>}
          <span className="tl-time" title={`${step.wall_at} · ${duration(step.active_ms)} into the task`}>
            {clockTime(step.wall_at)}
          </span>
        </div>
        {s.detail && <div className="tl-detail">{s.detail}</div>}
        {!open && result && <div className={`tl-result${step.ok ? "" : " tl-result-error"}`}>{result}</div>}
        {open && (
          <div className="tl-full">
            <StepResult step={step} compact />
          </div>
        )}
        {!step.retracted && (
          <div className="tl-notes">
            <div className="tl-notes-col">
              <textarea
                className="tl-why"
                rows={rowsFor(why)}
                placeholder={editable ? "Why I did this (optional)" : ""}
                aria-label={`Why I did step ${number ?? ""}`}
                value={why}
                readOnly={!editable}
                onChange={(e) => {
                  setWhy(e.target.value);
                  setSaved("idle");
                }}
                onBlur={() => {
                  if ((step.rationale ?? "") !== why.trim()) void save(why, flag);
                }}
                onKeyDown={(e) => {
                  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                    e.preventDefault();
                    e.stopPropagation();
                    (e.target as HTMLTextAreaElement).blur();
                  }
                }}
                data-testid="rationale"
              />
              {flagged && editable && (
                <input
                  className="tl-flag-note"
                  aria-label="Flag note"
                  value={flag}
                  onChange={(e) => setFlag(e.target.value)}
                  onBlur={() => flag.trim() !== (step.flag ?? "") && void save(why, flag || DEFAULT_FLAG)}
                />
              )}
              <span className="tl-saved muted" aria-live="polite">
                {saved === "saving" ? "Saving…" : saved === "saved" ? "Saved" : ""}
              </span>
            </div>
            <button
              type="button"
              className={`btn btn-xs ${flagged ? "btn-flag-on" : "btn-ghost"}`}
              aria-pressed={flagged}
              disabled={!editable}
              onClick={() => {
                const next = flagged ? "" : DEFAULT_FLAG;
                setFlag(next);
                void save(why, next);
              }}
              title="Flag this step for a reviewer"
              data-testid="flag"
            >
              ⚑ {flagged ? "Flagged" : "Flag"}
            </button>
          </div>
        )}
      </div>
    </li>
  );
});

/** Every step of the episode, oldest first, with time, result and notes. */
export function Timeline({
  steps,
  tools,
  views = [],
  editable,
  onAnnotate,
}: {
  steps: StepView[];
  tools: ToolInfo[];
  /** The world's records lists: an opened record's line uses their labels. */
  views?: ViewInfo[];
  editable: boolean;
  onAnnotate: (idx: number, rationale: string | null, flag: string | null) => Promise<void>;
}) {
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: "end" });
  }, [steps.length]);
  const kept = steps.filter((s) => !s.retracted).length;
  const labelsOf = (s: StepView) =>
    "tool" in s.action ? views.find((v) => v.tool === (s.action as { tool: string }).tool)?.labels : undefined;
  let n = 0;
  return (
    <div className="timeline" data-testid="timeline">
      {steps.length === 0 ? (
        <div className="timeline-empty">
          <p>Nothing done yet.</p>
          <p className="muted small">
            Each look-up, tool and message appears here the moment it is saved. Add a short “why” to the steps
            that matter.
          </p>
        </div>
      ) : (
        <>
          <p className="muted small timeline-count">
            {kept} {kept === 1 ? "action" : "actions"}
            {steps.length > kept ? ` · ${steps.length - kept} undone` : ""} · all saved
          </p>
          <ol className="tl-list">
            {steps.map((s) => (
              <Entry
                key={s.idx}
                step={s}
                number={s.retracted ? null : ++n}
                tools={tools}
                labels={labelsOf(s)}
                editable={editable}
                onAnnotate={onAnnotate}
              />
            ))}
          </ol>
        </>
      )}
      <div ref={end} />
    </div>
  );
}
