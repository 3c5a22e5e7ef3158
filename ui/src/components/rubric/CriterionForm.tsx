import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import type { DocProblem } from "../../bindings/DocProblem";
import type { QueryPreview } from "../../bindings/QueryPreview";
import type { RunChoice } from "../../bindings/RunChoice";
import type { TableColumns } from "../../bindings/TableColumns";
import type { ToolChoice } from "../../bindings/ToolChoice";
import { ArgsForm } from "./ArgsForm";
import { QueryPreviewPanel, SqlEditor } from "./SqlEditor";
import {
  countChoice,
  countTakesTimes,
  expectedValue,
  parseRecordQuery,
  recordQuery,
  sayKind,
  setField,
  str,
  defaultScale,
  orderTool,
  scaleOf,
  typed,
  withCount,
  withOrder,
  withSay,
  type Compare,
  type CountChoice,
  type Fields,
  type SayKind,
  type ScaleLevelFields,
} from "./fields";

const KIND_LABELS: Record<string, string> = {
  state: "The records at the end",
  action: "What was done",
  message: "What the customer is told",
  scope: "Other customers' records",
  judged: "A person's judgment",
};

/** Fields the forms show a problem at; any other problem shows under the form. */
/** Fields that say how a criterion counts, not what it checks. */
const DESCRIBING = new Set(["id", "description", "points", "gate", "required", "section"]);

const FIELDS_SHOWN = new Set([
  "description", "points", "gate", "required", "section", "query", "expect", "changes", "tool", "count", "args",
  "include_failed", "number", "date", "contains", "regex", "commit", "within", "check", "guidance", "after", "before",
  "scale",
]);

export function kindLabel(kind: unknown): string {
  return KIND_LABELS[str(kind)] ?? "Unknown kind";
}

/** One field with its label and, under it, the problem found there (in plain words). */
function Field({
  label,
  name,
  problems,
  hint,
  children,
}: {
  label: string;
  name: string;
  problems: DocProblem[];
  hint?: string;
  children: (id: string, invalid: boolean) => ReactNode;
}) {
  const id = useId();
  const here = problems.filter((p) => p.field === name);
  return (
    <div className={`rf-field${here.length ? " rf-invalid" : ""}`} data-field={name}>
      <label htmlFor={id} className="rf-label">
        {label}
      </label>
      {children(id, here.length > 0)}
      {hint && <div className="small muted">{hint}</div>}
      {here.map((p, i) => (
        <div key={i} className="rf-problem" role="alert" data-testid="field-problem">
          {p.message}
        </div>
      ))}
    </div>
  );
}

export interface CriterionFormProps {
  criterion: Fields;
  /** Problems of this criterion (any field). */
  problems: DocProblem[];
  tools: ToolChoice[];
  tables: TableColumns[];
  sections: string[];
  onChange: (c: Fields) => void;
  /** Runs a state check can be previewed on. */
  runs?: RunChoice[];
  /** What a query reads at the end of a run (the engine replays it). */
  preview?: (query: string, run: string) => Promise<QueryPreview>;
}

/** The form of one criterion: what every kind has, then its kind's own fields. */
export function CriterionForm({ criterion: c, problems, tools, tables, sections, onChange: change, runs, preview }: CriterionFormProps) {
  // A draft's plain words describe what it checked. Once the check itself
  // changes, words the annotator did not write here would describe the old
  // check, so they are dropped and the sentence is built from the new one.
  const typedFor = useRef<unknown>(undefined);
  const onChange = (next: Fields) => {
    const checkChanged = Object.keys({ ...c, ...next }).some(
      (k) => !DESCRIBING.has(k) && JSON.stringify(c[k]) !== JSON.stringify(next[k]),
    );
    change(checkChanged && typedFor.current !== c.id ? setField(next, "description", undefined) : next);
  };
  const set = (key: string, value: unknown) => {
    if (key === "description") typedFor.current = c.id;
    onChange(setField(c, key, value));
  };
  const kind = str(c.kind);
  const general = problems.filter((p) => !p.field || !FIELDS_SHOWN.has(p.field));
  const points = typeof c.points === "number" ? c.points : c.points === undefined ? 1 : Number(c.points);
  return (
    <div className="rf-form" data-testid="criterion-form" data-kind={kind}>
      <Field label="In plain words (what an expert reads)" name="description" problems={problems}>
        {(id) => (
          <textarea
            id={id}
            rows={2}
            value={str(c.description)}
            placeholder="Leave empty to use the sentence shown above"
            onChange={(e) => set("description", e.target.value || undefined)}
          />
        )}
      </Field>
      <div className="rf-row">
        <Field
          label="Points"
          name="points"
          problems={problems}
          hint={points < 0 ? "A penalty: taken off when this happens." : "Earned when this holds."}
        >
          {(id, invalid) => (
            <input
              id={id}
              type="number"
              step="any"
              aria-invalid={invalid}
              value={str(c.points)}
              onChange={(e) => set("points", e.target.value === "" ? undefined : Number(e.target.value))}
            />
          )}
        </Field>
        <Field label="Gate" name="gate" problems={problems} hint="If it does not hold, the whole score is 0.">
          {(id) => (
            <input id={id} type="checkbox" checked={c.gate === true} onChange={(e) => set("gate", e.target.checked || undefined)} />
          )}
        </Field>
        <Field label="Needed to pass" name="required" problems={problems}>
          {(id) => (
            <input
              id={id}
              type="checkbox"
              checked={c.required !== false}
              onChange={(e) => set("required", e.target.checked ? undefined : false)}
            />
          )}
        </Field>
        {sections.length > 0 && (
          <Field label="Group" name="section" problems={problems}>
            {(id) => (
              <select id={id} value={str(c.section)} onChange={(e) => set("section", e.target.value || undefined)}>
                <option value="">(choose a group)</option>
                {sections.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
      </div>
      {kind === "state" && <StateForm c={c} problems={problems} tables={tables} onChange={onChange} runs={runs} preview={preview} />}
      {kind === "action" && <ActionForm c={c} problems={problems} tools={tools} onChange={onChange} />}
      {kind === "message" && <MessageForm c={c} problems={problems} onChange={onChange} />}
      {kind === "scope" && (
        <Field label="What it checks" name="check" problems={problems}>
          {(id) => (
            <select id={id} value={str(c.check) || "writes"} onChange={(e) => set("check", e.target.value)}>
              <option value="writes">Changing, or trying to change, another customer's records</option>
              <option value="disclosure">Telling the customer another customer's details</option>
            </select>
          )}
        </Field>
      )}
      {kind === "judged" && (
        <>
          <Field label="The question for the person grading" name="guidance" problems={problems}>
            {(id) => <textarea id={id} rows={3} value={str(c.guidance)} onChange={(e) => set("guidance", e.target.value || undefined)} />}
          </Field>
          <ScaleField c={c} points={points} problems={problems} onChange={onChange} />
        </>
      )}
      {general.map((p, i) => (
        <div key={i} className="rf-problem" role="alert" data-testid="field-problem">
          {p.message}
        </div>
      ))}
    </div>
  );
}

/**
 * The value a record's field must end with, kept as typed: shown from the
 * parsed value, "79.0" would turn back into "79" at each keystroke and
 * "79.00" be entered as 790.
 */
function ValueInput({
  id,
  value,
  contains,
  onValue,
}: {
  id: string;
  value: unknown;
  contains: boolean;
  onValue: (v: unknown) => void;
}) {
  const parse = (text: string) => (contains ? text || undefined : typed(text));
  const [text, setText] = useState(str(value));
  // Follow a change from elsewhere (another criterion, how it compares),
  // never what is being typed.
  useEffect(() => {
    if (JSON.stringify(parse(text)) !== JSON.stringify(value)) setText(str(value));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value, contains]);
  return (
    <input
      id={id}
      value={text}
      placeholder={contains ? "e.g. duplicate" : "e.g. closed"}
      onChange={(e) => {
        setText(e.target.value);
        onValue(parse(e.target.value));
      }}
    />
  );
}

interface KindProps {
  c: Fields;
  problems: DocProblem[];
  onChange: (c: Fields) => void;
}

/** State: a record's field and the value it must end with; or what may change; or a custom check. */
export function StateForm({
  c,
  problems,
  tables,
  onChange,
  runs = [],
  preview,
}: KindProps & { tables: TableColumns[]; runs?: RunChoice[]; preview?: (query: string, run: string) => Promise<QueryPreview> }) {
  const set = (key: string, value: unknown) => onChange(setField(c, key, value));
  const changes = c.changes as { none?: boolean; only?: { table: string; key?: string }[] } | undefined;
  const built = typeof c.query === "string" ? parseRecordQuery(c.query) : null;
  const equals = expectedValue(c.expect);
  const derived = changes ? "changes" : c.query === undefined || (built && equals.ok) ? "record" : "custom";
  // The mode picked stays while this criterion is open: SQL typed in the
  // advanced view must not flip to the builder the moment it reads like one.
  const [picked, setPicked] = useState<{ id: unknown; mode: string } | null>(null);
  const mode = picked && picked.id === c.id && (picked.mode === "changes") === Boolean(changes) ? picked.mode : derived;
  const first = tables[0];
  const record = built ?? {
    table: first?.name ?? "",
    key: first?.key ?? "rowid",
    record: "",
    field: first?.columns.find((col) => col !== first.key) ?? first?.columns[0] ?? "id",
  };
  const table = tables.find((t) => t.name === record.table);
  const setRecord = (patch: Partial<typeof record>, value = equals.value, op: Compare = equals.op) => {
    const r = { ...record, ...patch };
    if (patch.table) {
      const t = tables.find((x) => x.name === patch.table);
      r.key = t?.key ?? "rowid";
      if (!t?.columns.includes(r.field)) r.field = t?.columns.find((col) => col !== r.key) ?? r.key;
    }
    let next = setField(setField(c, "changes", undefined), "query", recordQuery(r));
    next = setField(next, "expect", value === undefined ? undefined : { [op]: op === "contains" ? str(value) : value });
    onChange(next);
  };
  const setMode = (m: string) => {
    setPicked({ id: c.id, mode: m });
    if (m === "changes") onChange(setField(setField(setField(c, "query", undefined), "expect", undefined), "changes", { none: true }));
    else if (m === "record") setRecord({});
    else onChange(setField(c, "changes", undefined));
  };
  const only = changes?.only ?? [];
  const setOnly = (list: { table: string; key?: string }[]) => set("changes", list.length ? { only: list } : { none: true });
  return (
    <fieldset className="rf-kind">
      <legend>{kindLabel("state")}</legend>
      <div className="rf-modes" role="radiogroup" aria-label="What to check">
        {[
          ["record", "A record's field"],
          ["changes", "Nothing else changed"],
          ["custom", "Advanced: the check in SQL"],
        ].map(([m, label]) => (
          <label key={m} className="rf-mode">
            <input type="radio" name="state-mode" value={m} checked={mode === m} onChange={() => setMode(m!)} /> {label}
          </label>
        ))}
      </div>
      {mode === "record" && (
        <div className="rf-row">
          <Field label="Table" name="query" problems={problems}>
            {(id) => (
              <select id={id} value={record.table} onChange={(e) => setRecord({ table: e.target.value })}>
                {tables.map((t) => (
                  <option key={t.name} value={t.name}>
                    {t.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={`Record (${record.key})`} name="record" problems={problems}>
            {(id) => <input id={id} value={record.record} placeholder="e.g. INV-24073" onChange={(e) => setRecord({ record: e.target.value })} />}
          </Field>
          <Field label="Field" name="field" problems={problems}>
            {(id) => (
              <select id={id} value={record.field} onChange={(e) => setRecord({ field: e.target.value })}>
                <option value="">(choose)</option>
                {(table?.columns ?? []).map((col) => (
                  <option key={col} value={col}>
                    {col}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="How" name="compare" problems={problems}>
            {(id) => (
              <select id={id} value={equals.op} onChange={(e) => setRecord({}, equals.value, e.target.value as Compare)}>
                <option value="equals">ends up as</option>
                <option value="contains">mentions</option>
              </select>
            )}
          </Field>
          <Field label={equals.op === "contains" ? "Mentions" : "Ends up as"} name="expect" problems={problems}>
            {(id) => (
              <ValueInput
                id={id}
                value={equals.value}
                contains={equals.op === "contains"}
                onValue={(v) => setRecord({}, v)}
              />
            )}
          </Field>
        </div>
      )}
      {mode === "changes" && (
        <Field label="Records that may change (everything else must stay as it was)" name="changes" problems={problems}>
          {(id) => (
            <div id={id} className="rf-list">
              {only.length === 0 && <div className="small muted">None: nothing may change.</div>}
              {only.map((o, i) => (
                <div key={i} className="rf-row">
                  <select
                    aria-label="Table"
                    value={o.table}
                    onChange={(e) => setOnly(only.map((x, j) => (j === i ? { ...x, table: e.target.value } : x)))}
                  >
                    {tables.map((t) => (
                      <option key={t.name} value={t.name}>
                        {t.name}
                      </option>
                    ))}
                  </select>
                  <input
                    aria-label="Record (empty: any)"
                    placeholder="any record"
                    value={o.key ?? ""}
                    onChange={(e) =>
                      setOnly(only.map((x, j) => (j === i ? { table: x.table, ...(e.target.value ? { key: e.target.value } : {}) } : x)))
                    }
                  />
                  <button type="button" className="btn btn-ghost btn-xs" onClick={() => setOnly(only.filter((_, j) => j !== i))}>
                    Remove
                  </button>
                </div>
              ))}
              <button
                type="button"
                className="btn btn-secondary btn-xs"
                onClick={() => setOnly([...only, { table: tables[0]?.name ?? "" }])}
              >
                Allow another
              </button>
            </div>
          )}
        </Field>
      )}
      {mode === "custom" && (
        <>
          <Field
            label="Check (SQL, read-only)"
            name="query"
            problems={problems}
            hint="Ctrl+Space lists the world's tables and fields. The check reads the first field of the first row."
          >
            {(id, invalid) => (
              <SqlEditor id={id} value={str(c.query)} tables={tables} invalid={invalid} onChange={(text) => set("query", text || undefined)} />
            )}
          </Field>
          {preview && <QueryPreviewPanel query={str(c.query)} runs={runs} preview={preview} />}
          <Field label="Expected result" name="expect" problems={problems} hint={'e.g. {"equals": 1} or {"rows": 0}'}>
            {(id) => (
              <input
                id={id}
                className="mono"
                defaultValue={c.expect === undefined ? "" : JSON.stringify(c.expect)}
                onBlur={(e) => {
                  try {
                    set("expect", e.target.value.trim() ? JSON.parse(e.target.value) : undefined);
                  } catch {
                    set("expect", e.target.value);
                  }
                }}
              />
            )}
          </Field>
        </>
      )}
    </fieldset>
  );
}

/** Action: which tool, how often, with which argument values, in what order, refused calls or not. */
export function ActionForm({ c, problems, tools, onChange }: KindProps & { tools: ToolChoice[] }) {
  const set = (key: string, value: unknown) => onChange(setField(c, key, value));
  const tool = tools.find((t) => t.name === c.tool);
  const args = (c.args && typeof c.args === "object" ? c.args : {}) as Record<string, unknown>;
  const { choice, n } = countChoice(c);
  const never = choice === "never";
  return (
    <fieldset className="rf-kind">
      <legend>{kindLabel("action")}</legend>
      <div className="rf-row">
        <Field label="Tool" name="tool" problems={problems}>
          {(id, invalid) => (
            <select id={id} aria-invalid={invalid} value={str(c.tool)} onChange={(e) => onChange(setField(setField(c, "tool", e.target.value), "args", undefined))}>
              {!tool && <option value={str(c.tool)}>{str(c.tool) || "(choose a tool)"}</option>}
              {tools.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.title || t.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="How often" name="count" problems={problems}>
          {(id) => (
            <select id={id} value={choice} onChange={(e) => onChange(withCount(c, e.target.value as CountChoice, n < 2 ? 2 : n))}>
              <option value="at-least-once">At least once</option>
              <option value="exactly-once">Exactly once</option>
              <option value="exactly">Exactly…</option>
              <option value="at-least">At least…</option>
              <option value="at-most">At most…</option>
              <option value="never">Never (a rule)</option>
            </select>
          )}
        </Field>
        {countTakesTimes(choice) && (
          <Field label="Times" name="times" problems={problems}>
            {(id) => <input id={id} type="number" min={0} value={n} onChange={(e) => onChange(withCount(c, choice, Number(e.target.value)))} />}
          </Field>
        )}
        <Field
          label="Refused attempts count"
          name="include_failed"
          problems={problems}
          hint={never ? "Trying counts, even when the system refuses it." : "Off: only calls that went through count."}
        >
          {(id) => (
            <input
              id={id}
              type="checkbox"
              checked={c.include_failed === true || (c.include_failed === undefined && never)}
              onChange={(e) => set("include_failed", e.target.checked === never ? undefined : e.target.checked)}
            />
          )}
        </Field>
      </div>
      <div className="rf-row">
        <OrderField c={c} which="after" tools={tools} problems={problems} onChange={onChange} />
        <OrderField c={c} which="before" tools={tools} problems={problems} onChange={onChange} />
      </div>
      <Field label="With these values (leave empty: any value)" name="args" problems={problems}>
        {(id) => (
          <div id={id}>
            {tool ? (
              <ArgsForm tool={tool.name} parameters={tool.schema as Record<string, unknown>} args={args} onArgs={(a) => set("args", a)} />
            ) : (
              <div className="small muted">Choose a tool to see its values.</div>
            )}
          </div>
        )}
      </Field>
    </fieldset>
  );
}

/** "Only after …" / "Before …": the step that must come first, or must not. */
function OrderField({
  c,
  which,
  tools,
  problems,
  onChange,
}: KindProps & { which: "after" | "before"; tools: ToolChoice[] }) {
  const { tool, detailed } = orderTool(c, which);
  const known = tools.some((t) => t.name === tool);
  return (
    <Field
      label={which === "after" ? "Only after" : "Before"}
      name={which}
      problems={problems}
      hint={
        detailed
          ? "The rubric file says more about that step (its values or a message); choosing another tool replaces it."
          : which === "after"
            ? "Each counted call needs this step earlier."
            : "This step must not come before a counted call."
      }
    >
      {(id) => (
        <select id={id} value={detailed && !tool ? "(detailed)" : tool} onChange={(e) => e.target.value !== "(detailed)" && onChange(withOrder(c, which, e.target.value))}>
          <option value="">(any time)</option>
          {detailed && !tool && <option value="(detailed)">(as the file says)</option>}
          {tool && !known && <option value={tool}>{tool}</option>}
          {tools.map((t) => (
            <option key={t.name} value={t.name}>
              {which === "after" ? "after " : "before "}
              {t.title || t.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A judged criterion's grading scale: met or not met, or levels with labels and points. */
export function ScaleField({ c, points, problems, onChange }: KindProps & { points: number }) {
  const scale = scaleOf(c);
  const setScale = (levels: ScaleLevelFields[] | undefined) => onChange(setField(c, "scale", levels));
  const top = Number.isFinite(points) && points !== 0 ? points : 1;
  return (
    <Field
      label="How it is graded"
      name="scale"
      problems={problems}
      hint={
        scale
          ? `Each level earns its points; the best must earn all ${top}. A level with 0 points counts as not met.`
          : "The grader says met or not met."
      }
    >
      {(id) => (
        <div id={id} className="rf-list" data-testid="scale">
          {!scale && (
            <button type="button" className="btn btn-secondary btn-xs" onClick={() => setScale(defaultScale(top))} data-testid="use-scale">
              Grade on a scale instead
            </button>
          )}
          {scale?.map((l, i) => (
            <div key={i} className="rf-row" data-testid="scale-level">
              <input
                aria-label={`Level ${i + 1}: words the grader picks`}
                value={l.label}
                placeholder="e.g. Clear but curt"
                onChange={(e) => setScale(scale.map((x, j) => (j === i ? { ...x, label: e.target.value } : x)))}
              />
              <input
                aria-label={`Level ${i + 1}: points`}
                type="number"
                step="any"
                value={str(l.points)}
                onChange={(e) => setScale(scale.map((x, j) => (j === i ? { ...x, points: e.target.value === "" ? 0 : Number(e.target.value) } : x)))}
              />
              <button type="button" className="btn btn-ghost btn-xs" onClick={() => setScale(scale.filter((_, j) => j !== i))}>
                Remove
              </button>
            </div>
          ))}
          {scale && (
            <div className="row gap-xs">
              <button
                type="button"
                className="btn btn-secondary btn-xs"
                onClick={() => setScale([...scale, { label: "", points: 0 }])}
              >
                Add a level
              </button>
              <button type="button" className="btn btn-ghost btn-xs" onClick={() => setScale(undefined)} data-testid="no-scale">
                Met or not met instead
              </button>
            </div>
          )}
        </div>
      )}
    </Field>
  );
}

const SAY_LABELS: Record<SayKind, string> = {
  number: "An amount or number",
  date: "A date (YYYY-MM-DD)",
  contains: "Words or a reference (e.g. INV-24073)",
  regex: "A pattern (advanced)",
};

/** Message: the value that must be said, its kind, and whether it must be the only answer. */
export function MessageForm({ c, problems, onChange }: KindProps) {
  const set = (key: string, value: unknown) => onChange(setField(c, key, value));
  const kind = sayKind(c);
  return (
    <fieldset className="rf-kind">
      <legend>{kindLabel("message")}</legend>
      <div className="rf-row">
        <Field label="What must be said" name="say-kind" problems={problems}>
          {(id) => (
            <select id={id} value={kind} onChange={(e) => onChange(withSay(c, e.target.value as SayKind, str(c[kind])))}>
              {(Object.keys(SAY_LABELS) as SayKind[]).map((k) => (
                <option key={k} value={k}>
                  {SAY_LABELS[k]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Value" name={kind} problems={problems}>
          {(id, invalid) => (
            <input id={id} aria-invalid={invalid} value={str(c[kind])} onChange={(e) => onChange(withSay(c, kind, e.target.value))} />
          )}
        </Field>
      </div>
      <div className="rf-row">
        <Field label="The only answer (no competing value of its kind)" name="commit" problems={problems}>
          {(id) => (
            <input id={id} type="checkbox" checked={c.commit !== false} onChange={(e) => set("commit", e.target.checked ? undefined : false)} />
          )}
        </Field>
        <Field label="In the last message" name="within" problems={problems}>
          {(id) => (
            <input id={id} type="checkbox" checked={c.within === "last"} onChange={(e) => set("within", e.target.checked ? "last" : undefined)} />
          )}
        </Field>
      </div>
    </fieldset>
  );
}
