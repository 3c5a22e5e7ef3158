// The team hub's state in plain words, for the start screen's hub card.
import type { HubView } from "../bindings/HubView";
import { dateTime, plural } from "./format";

/** "3 recordings waiting to be sent", or that everything is sent. */
export function waitingText(view: HubView): string {
  if (view.syncing) return "Sending…";
  const work = view.work.filter((w) => w.state === "waiting").length;
  if (view.waiting === 0 && work === 0) return "Everything is sent";
  const recordings = view.waiting > 0 ? plural(view.waiting, "recording") : null;
  const other = work > 0 ? `${work} ${work === 1 ? "decision or grade" : "decisions or grades"}` : null;
  return `${[recordings, other].filter(Boolean).join(" and ")} waiting to be sent`;
}

/** "Last sent Mar 4, 14:05", or that nothing was sent yet. */
export function lastSentText(view: HubView): string {
  return view.last_synced_at ? `Last sent ${dateTime(view.last_synced_at)}` : "Nothing sent yet";
}

/** The role as people say it. */
export function roleText(role: string): string {
  return role.charAt(0).toUpperCase() + role.slice(1);
}

/** What the start screen says about an assignment's world on this computer. */
export function assignmentNote(here: string, worldId: string): string | null {
  if (here === "ready") return null;
  if (here === "other_version")
    return `The hub assigned a different version of “${worldId}” than the one on this computer. Ask your team's admin for the assigned version.`;
  return `The world “${worldId}” is not on this computer. Ask your team's admin for it.`;
}
