// Small formatting helpers shared by the screens.
import type { Action } from "../bindings/Action";
import type { ToolInfo } from "../bindings/ToolInfo";
import { humanize } from "./errors";

/** 3 725 000 ms → "1 h 02 min"; 65 000 → "1:05". */
export function duration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, "0")} min`;
  return `${m}:${String(s).padStart(2, "0")}`;
}

/** An RFC 3339 time as the local wall-clock time, e.g. "14:05:09". */
export function clockTime(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

/** "2025-03-01T09:00:00Z" → "Mar 1, 14:05" style relative label. */
export function dateTime(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return d.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
}

export function isMessage(a: Action): a is { message: string } {
  return "message" in a;
}

/** A short, readable account of an action's arguments. */
export function argsSummary(args: Record<string, unknown>): string {
  return Object.entries(args)
    .filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => `${humanize(k)}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" · ");
}

/**
 * A look through a record list, as a sentence a reviewer reads at a glance:
 * `{filter: {customer_id: "C-1012"}, sort: "due_date", descending: true}` →
 * "Customer id equals C-1012 · sorted by due date, last first".
 */
export function listingSummary(args: Record<string, unknown>): string {
  const parts: string[] = [];
  const filter = args.filter;
  if (filter && typeof filter === "object") {
    for (const [column, value] of Object.entries(filter as Record<string, unknown>)) {
      parts.push(`${humanize(column)} equals ${cell(value)}`);
    }
  }
  if (typeof args.search === "string" && args.search.trim() !== "") parts.push(`containing “${args.search.trim()}”`);
  if (typeof args.sort === "string") {
    parts.push(`sorted by ${humanize(args.sort).toLowerCase()}${args.descending ? ", last first" : ""}`);
  }
  if (typeof args.offset === "number" && args.offset > 0) parts.push(`from row ${args.offset + 1}`);
  return parts.join(" · ");
}

/** The title of the tool an action calls, or a readable fallback. */
export function toolTitle(tools: ToolInfo[], name: string): string {
  return tools.find((t) => t.name === name)?.title ?? humanize(name);
}

/** "1 action", "3 actions". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A cell value for tables. */
export function cell(v: unknown): string {
  if (v === null || v === undefined) return "—";
  if (typeof v === "boolean") return v ? "Yes" : "No";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** True when `text` is JSON rather than a written result. */
/** A result shown as data (a listing, a record): the app leaves `text`
 * empty when it is only the data written as JSON, or the text is JSON. */
export function isDataResult(step: { text: string; content: unknown }): boolean {
  if (step.text === "") return !!step.content && typeof step.content === "object";
  return looksLikeJson(step.text);
}

export function looksLikeJson(text: string): boolean {
  const t = text.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}
