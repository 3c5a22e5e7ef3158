import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { StepView } from "../bindings/StepView";
import type { TaskBrief } from "../bindings/TaskBrief";
import { clockTime, isMessage } from "../lib/format";
import { ShortcutKeys } from "./Kbd";

interface Bubble {
  who: "customer" | "expert";
  text: string;
  at?: string;
  retracted?: boolean;
  key: string;
}

/** The customer's side comes from the task: the opening message, then the
 * scripted reply to each message the expert sends. */
export function bubbles(task: TaskBrief, steps: StepView[]): Bubble[] {
  const out: Bubble[] = [];
  if (task.opening_message) out.push({ who: "customer", text: task.opening_message, key: "opening" });
  for (const s of steps) {
    if (!isMessage(s.action)) continue;
    out.push({ who: "expert", text: s.action.message, at: s.wall_at, retracted: s.retracted, key: `m${s.idx}` });
    if (s.text.trim()) out.push({ who: "customer", text: s.text, at: s.wall_at, retracted: s.retracted, key: `r${s.idx}` });
  }
  return out;
}

export function Conversation({
  task,
  steps,
  disabled,
  busy,
  onSend,
  composerRef,
  closedNote = "Messages are closed for this task.",
  initialDraft = "",
  onDraft,
}: {
  task: TaskBrief;
  steps: StepView[];
  disabled: boolean;
  busy: boolean;
  onSend: (message: string) => Promise<boolean>;
  composerRef: React.RefObject<HTMLTextAreaElement | null>;
  /** Shown in the empty composer while it is disabled. */
  closedNote?: string;
  /** A message half-written before the app closed, put back in the box. */
  initialDraft?: string;
  /** Called as the expert types (and with "" once the message is sent), to save the draft. */
  onDraft?: (text: string, now?: boolean) => void;
}) {
  const [draft, setDraft] = useState(initialDraft);
  const endRef = useRef<HTMLDivElement>(null);
  const list = bubbles(task, steps);
  const customer = task.customer;
  // Bubbles name the person only ("Priya Raman"), the header in full.
  const speaker = customer.split(",")[0];

  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: "end" });
  }, [list.length]);

  const send = async () => {
    const text = draft.trim();
    if (!text || disabled || busy) return;
    if (await onSend(text)) {
      setDraft("");
      onDraft?.("", true);
    }
  };

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void send();
    }
  };

  return (
    <section className="panel conversation" aria-labelledby="conv-title">
      <header className="panel-header">
        <h2 id="conv-title" className="panel-title">
          Conversation <span className="muted">with {customer}</span>
        </h2>
      </header>
      <div className="thread" data-testid="thread">
        {list.map((b) => (
          <div key={b.key} className={`bubble bubble-${b.who}${b.retracted ? " bubble-retracted" : ""}`}>
            <div className="bubble-meta">
              {b.who === "customer" ? speaker : "You"}
              {b.at && <span> · {clockTime(b.at)}</span>}
              {b.retracted && <span className="chip chip-grey chip-xs">Undone</span>}
            </div>
            <div className="bubble-text">{b.text}</div>
          </div>
        ))}
        <div ref={endRef} />
      </div>
      <div className="composer">
        <textarea
          ref={composerRef}
          aria-label="Message to the customer"
          placeholder={disabled ? closedNote : `Write to ${speaker}…`}
          rows={3}
          value={draft}
          disabled={disabled}
          onChange={(e) => {
            setDraft(e.target.value);
            onDraft?.(e.target.value);
          }}
          onKeyDown={onKey}
          data-testid="composer"
        />
        <div className="composer-actions">
          <span className="muted small">Sent messages are recorded as actions.</span>
          <button
            type="button"
            className="btn btn-primary btn-sm"
            disabled={disabled || busy || !draft.trim()}
            onClick={() => void send()}
            data-testid="send"
          >
            Send <ShortcutKeys name="run" />
          </button>
        </div>
      </div>
    </section>
  );
}
