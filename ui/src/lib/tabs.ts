import type { KeyboardEvent } from "react";

/**
 * Arrow keys in a tablist (put this on the `role="tablist"` element): ← and →
 * move focus to the previous or next tab, wrapping, and Home and End to the
 * first and last. Activation stays manual (Enter or Space), because opening
 * a record list is a look-up recorded in the gold run: moving focus must not
 * record anything. Returns whether the key moved focus.
 */
export function moveBetweenTabs(e: KeyboardEvent<HTMLElement>): boolean {
  const tabs = Array.from(e.currentTarget.querySelectorAll<HTMLElement>('[role="tab"]:not([disabled])'));
  const at = tabs.indexOf(document.activeElement as HTMLElement);
  if (at < 0 || tabs.length === 0) return false;
  let next: number;
  if (e.key === "ArrowRight") next = (at + 1) % tabs.length;
  else if (e.key === "ArrowLeft") next = (at - 1 + tabs.length) % tabs.length;
  else if (e.key === "Home") next = 0;
  else if (e.key === "End") next = tabs.length - 1;
  else return false;
  e.preventDefault();
  tabs[next]?.focus();
  return true;
}
