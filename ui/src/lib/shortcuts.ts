// Keyboard shortcuts: one table, used both to handle keys and to show them.
import { useEffect, useRef } from "react";

export interface Shortcut {
  /** `KeyboardEvent.key`, lower-case for letters. */
  key: string;
  ctrl?: boolean;
  shift?: boolean;
  /** Also fire while typing in a text field. */
  inFields?: boolean;
  label: string;
}

export const SHORTCUTS = {
  palette: { key: "k", ctrl: true, inFields: true, label: "Find a tool" },
  run: { key: "Enter", ctrl: true, inFields: true, label: "Run the tool / send the message" },
  message: { key: "m", ctrl: true, inFields: true, label: "Write to the customer" },
  policy: { key: "b", ctrl: true, inFields: true, label: "Show the policy" },
  undo: { key: "z", ctrl: true, shift: false, label: "Undo the last action" },
  redo: { key: "z", ctrl: true, shift: true, label: "Redo the action just undone" },
  pause: { key: "p", ctrl: true, inFields: true, label: "Pause or resume" },
  submit: { key: "s", ctrl: true, inFields: true, label: "Review and submit" },
  records: { key: "r", ctrl: true, inFields: true, label: "Go to the records (then ← → between lists, ↓ to the first row)" },
  why: { key: "j", ctrl: true, inFields: true, label: "Add a why to the last step" },
  help: { key: "?", label: "Show keyboard shortcuts" },
  close: { key: "Escape", inFields: true, label: "Close a dialog" },
} satisfies Record<string, Shortcut>;

export type ShortcutName = keyof typeof SHORTCUTS;

/** "Ctrl K" for display. */
export function keysOf(s: Shortcut): string[] {
  const keys: string[] = [];
  if (s.ctrl) keys.push("Ctrl");
  if (s.shift) keys.push("Shift");
  keys.push(s.key === "Escape" ? "Esc" : s.key.length === 1 ? s.key.toUpperCase() : s.key);
  return keys;
}

function isTextField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  const tag = target.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable;
}

export function matches(s: Shortcut, e: KeyboardEvent): boolean {
  const ctrl = e.ctrlKey || e.metaKey;
  if (!!s.ctrl !== ctrl) return false;
  if (s.shift !== undefined && s.shift !== e.shiftKey) return false;
  if (!s.inFields && isTextField(e.target)) return false;
  return e.key === s.key || e.key.toLowerCase() === s.key;
}

/** Handles the given shortcuts while the component is mounted. */
export function useShortcuts(handlers: Partial<Record<ShortcutName, () => void>>): void {
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      for (const [name, handler] of Object.entries(ref.current)) {
        const s = SHORTCUTS[name as ShortcutName];
        if (handler && matches(s, e)) {
          e.preventDefault();
          handler();
          return;
        }
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
