import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { api, asAppError } from "../api";
import type { AppError } from "../bindings/AppError";
import type { StepView } from "../bindings/StepView";
import type { TaskBrief } from "../bindings/TaskBrief";
import type { TurnView } from "../bindings/TurnView";
import { clockTime } from "../lib/format";
import { ErrorBanner } from "./ErrorBanner";
import { ShortcutKeys } from "./Kbd";

interface Bubble {
  who: "customer" | "expert";
  text: string;
  at?: string;
  retracted?: boolean;
  key: string;
}

/** The thread: the task's opening message, then the engine's transcript
 * (the one the agent server and every export use): each message the
 * expert sent and the customer's reply to it. Tool calls are the
 * timeline's, not the conversation's. */
export function bubbles(task: TaskBrief, turns: TurnView[]): Bubble[] {
  const out: Bubble[] = [];
  if (task.opening_message) out.push({ who: "customer", text: task.opening_message, key: "opening" });
  for (const t of turns) {
    if (t.kind !== "say") continue;
    const key = t.idx === null ? "final" : String(t.idx);
    const at = t.wall_at ?? undefined;
    out.push({ who: "expert", text: t.message, at, retracted: t.retracted, key: `m${key}` });
    if (t.reply.trim()) out.push({ who: "customer", text: t.reply, at, retracted: t.retracted, key: `r${key}` });
  }
  return out;
}

/** The episode's transcript from the engine, fetched again whenever a step
 * is recorded or undone. */
function useTranscript(episodeId: string, steps: StepView[]): { turns: TurnView[]; error: AppError | null } {
  const [turns, setTurns] = useState<TurnView[]>([]);
  const [error, setError] = useState<AppError | null>(null);
  const version = steps.map((s) => `${s.idx}${s.retracted ? "u" : ""}`).join(",");
  useEffect(() => {
    let live = true;
    api.episodeTranscript(episodeId).then(
      (t) => {
        if (!live) return;
        setTurns(t);
        setError(null);
      },
      (e: unknown) => {
        if (live) setError(asAppError(e));
      },
    );
    return () => {
      live = false;
    };
  }, [episodeId, version]);
  return { turns, error };
}

export function Conversation({
  episodeId,
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
  episodeId: string;
  task: TaskBrief;
  /** The episode's steps: the conversation is fetched again when they change. */
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
  const { turns, error } = useTranscript(episodeId, steps);
  const list = bubbles(task, turns);
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
        {error && <ErrorBanner error={error} />}
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
