import { useCallback, useEffect, useRef } from "react";

/** How long after the last keystroke a draft is saved. */
export const DRAFT_DELAY_MS = 300;

/**
 * Saves drafts (what the expert types and has not sent) shortly after each
 * pause in typing, one slot at a time, and saves any still waiting when the
 * screen closes. The store commits each save before answering, so a crash
 * loses at most the last {@link DRAFT_DELAY_MS} of typing.
 *
 * Returns `draft(slot, text)`; `draft(slot, text, true)` saves at once
 * (clearing a sent message must not wait).
 */
export function useDraftSaver(
  save: (slot: string, text: string) => Promise<unknown>,
  onError: (e: unknown) => void,
): (slot: string, text: string, now?: boolean) => void {
  const pending = useRef(new Map<string, { text: string; timer: ReturnType<typeof setTimeout> }>());
  const saveRef = useRef(save);
  saveRef.current = save;
  const errorRef = useRef(onError);
  errorRef.current = onError;

  const flush = useCallback((slot: string) => {
    const p = pending.current.get(slot);
    if (!p) return;
    clearTimeout(p.timer);
    pending.current.delete(slot);
    saveRef.current(slot, p.text).catch((e: unknown) => errorRef.current(e));
  }, []);

  useEffect(() => {
    const all = pending.current;
    return () => {
      for (const slot of [...all.keys()]) flush(slot);
    };
  }, [flush]);

  return useCallback(
    (slot: string, text: string, now = false) => {
      const old = pending.current.get(slot);
      if (old) clearTimeout(old.timer);
      const timer = setTimeout(() => flush(slot), now ? 0 : DRAFT_DELAY_MS);
      pending.current.set(slot, { text, timer });
      if (now) flush(slot);
    },
    [flush],
  );
}

/** The slot a tool's form is saved under. */
export function toolSlot(tool: string): string {
  return `tool:${tool}`;
}

/** The slot of the message being written to the customer. */
export const MESSAGE_SLOT = "message";
