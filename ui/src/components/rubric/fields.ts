// Reading and writing a criterion's fields (as the rubric file names them)
// from the forms, and the simple record check the state builder writes.

export type Fields = Record<string, unknown>;

/** A copy of `c` with `key` set, or removed when `value` is undefined. */
export function setField(c: Fields, key: string, value: unknown): Fields {
  const next = { ...c };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

export function str(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

/** What a person typed, as the value a rubric compares: a number when it reads as one. */
export function typed(text: string): unknown {
  const t = text.trim();
  if (t === "") return undefined;
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === "true" || t === "false") return t === "true";
  return t;
}

/** `SELECT "field" FROM "table" WHERE "key" = 'record'`, the builder's query. */
export interface RecordCheck {
  table: string;
  key: string;
  record: string;
  field: string;
}

function sqlIdent(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

function sqlText(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

export function recordQuery(r: RecordCheck): string {
  return `SELECT ${sqlIdent(r.field)} FROM ${sqlIdent(r.table)} WHERE ${sqlIdent(r.key)} = ${sqlText(r.record)}`;
}

/** The builder's fields back from a query it wrote (or one of that shape); null otherwise. */
export function parseRecordQuery(query: string): RecordCheck | null {
  const m = /^\s*SELECT\s+"?(\w+)"?\s+FROM\s+"?(\w+)"?\s+WHERE\s+"?(\w+)"?\s*=\s*'((?:[^']|'')*)'\s*$/i.exec(query);
  if (!m) return null;
  const [, field, table, key, record] = m;
  if (!field || !table || !key || record === undefined) return null;
  if (field.toLowerCase() === "count" || field === "1") return null;
  return { field, table, key, record: record.replace(/''/g, "'") };
}

/** How the builder compares the field: it is the value, or it mentions the words. */
export type Compare = "equals" | "contains";

/** The single value `expect = { equals = V }` (or `{ contains = "…" }`) asks for. */
export function expectedValue(expect: unknown): { ok: boolean; op: Compare; value: unknown } {
  if (expect && typeof expect === "object" && !Array.isArray(expect)) {
    const o = expect as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === "equals") return { ok: true, op: "equals", value: o.equals };
    if (keys.length === 1 && keys[0] === "contains") return { ok: true, op: "contains", value: o.contains };
  }
  return { ok: expect === undefined, op: "equals", value: undefined };
}

/** The count an action criterion asks for, as the form offers it. */
export type CountChoice = "at-least-once" | "exactly-once" | "never" | "exactly" | "at-least" | "at-most";

export function countChoice(c: Fields): { choice: CountChoice; n: number } {
  if (c.called === false || (typeof c.points === "number" && c.points < 0)) return { choice: "never", n: 0 };
  const count = c.count;
  if (typeof count === "number") return count === 1 ? { choice: "exactly-once", n: 1 } : { choice: "exactly", n: count };
  if (count && typeof count === "object") {
    const o = count as { min?: number; max?: number };
    if (o.min === 1 && o.max === 1) return { choice: "exactly-once", n: 1 };
    if (o.min !== undefined && o.min === o.max) return { choice: "exactly", n: o.min };
    if (o.max !== undefined && o.min === undefined) return { choice: "at-most", n: o.max };
    if (o.min !== undefined && o.max === undefined && o.min !== 1) return { choice: "at-least", n: o.min };
  }
  return { choice: "at-least-once", n: 1 };
}

/** Whether a count choice takes a number of times. */
export function countTakesTimes(choice: CountChoice): boolean {
  return choice === "exactly" || choice === "at-least" || choice === "at-most";
}

export function withCount(c: Fields, choice: CountChoice, n: number): Fields {
  let next = setField(setField(c, "count", undefined), "called", undefined);
  if (choice === "exactly-once") next = setField(next, "count", { min: 1, max: 1 });
  if (choice === "exactly") next = setField(next, "count", n);
  if (choice === "at-least") next = setField(next, "count", { min: n });
  if (choice === "at-most") next = setField(next, "count", { max: n });
  if (choice === "never") {
    const points = typeof next.points === "number" ? next.points : 1;
    // "Never" is a rule: it costs points when broken.
    next = setField(next, "points", points > 0 ? -points : points);
  } else if (typeof next.points === "number" && next.points < 0) {
    next = setField(next, "points", -next.points);
  }
  return next;
}

/** An ordering condition of an action criterion (`after = P` or `before = P`): the tool it names. */
export function orderTool(c: Fields, key: "after" | "before"): { tool: string; detailed: boolean } {
  const p = c[key];
  if (!p || typeof p !== "object") return { tool: "", detailed: false };
  const o = p as Record<string, unknown>;
  if (typeof o.tool === "string") return { tool: o.tool, detailed: Object.keys(o).some((k) => k !== "tool") };
  return { tool: "", detailed: true };
}

/** `c` with its ordering condition on `tool` (none when empty); the values a pattern names are kept while the tool stays. */
export function withOrder(c: Fields, key: "after" | "before", tool: string): Fields {
  if (!tool) return setField(c, key, undefined);
  const old = c[key] as Record<string, unknown> | undefined;
  const keep = old && old.tool === tool ? old : {};
  return setField(c, key, { ...keep, tool });
}

/** What a message criterion looks for. */
export type SayKind = "number" | "date" | "contains" | "regex";

export const SAY_KINDS: SayKind[] = ["number", "date", "contains", "regex"];

export function sayKind(c: Fields): SayKind {
  return SAY_KINDS.find((k) => c[k] !== undefined) ?? "number";
}

export function withSay(c: Fields, kind: SayKind, text: string): Fields {
  let next = c;
  for (const k of SAY_KINDS) next = setField(next, k, undefined);
  const t = text.trim();
  if (t === "") return next;
  // Numbers stay as typed ("79.00"), so an amount keeps its cents.
  return setField(next, kind, t);
}

/** One level of a judged criterion's scale, as the rubric file writes it. */
export interface ScaleLevelFields {
  label: string;
  points: number;
}

/** The scale of a judged criterion, or null when it is graded met or not met. */
export function scaleOf(c: Fields): ScaleLevelFields[] | null {
  if (!Array.isArray(c.scale)) return null;
  return c.scale.map((l) => {
    const o = (l && typeof l === "object" ? l : {}) as Record<string, unknown>;
    return { label: str(o.label), points: typeof o.points === "number" ? o.points : Number(o.points ?? 0) };
  });
}

/** A three-level scale to start from: all, half and none of `points`. */
export function defaultScale(points: number): ScaleLevelFields[] {
  return [
    { label: "Fully", points },
    { label: "Partly", points: points / 2 },
    { label: "Not at all", points: 0 },
  ];
}
