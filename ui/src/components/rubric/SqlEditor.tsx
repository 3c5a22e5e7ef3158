// The advanced view of a state check: the SQL in a CodeMirror 6 editor that
// completes the world's table and field names, with a read-only preview of
// what the query reads on any stored run's final state (replayed by the
// engine). Keyboard-first: Ctrl+Space completes, Tab leaves the editor as
// in any other field, Ctrl+Z undoes.
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { sql, SQLite } from "@codemirror/lang-sql";
import { bracketMatching, syntaxHighlighting, defaultHighlightStyle } from "@codemirror/language";
import { Compartment, EditorState } from "@codemirror/state";
import { EditorView, keymap, placeholder as placeholderExt } from "@codemirror/view";
import { useEffect, useRef, useState } from "react";
import type { QueryPreview } from "../../bindings/QueryPreview";
import type { RunChoice } from "../../bindings/RunChoice";
import type { TableColumns } from "../../bindings/TableColumns";

/** The completion schema lang-sql takes: table name → its field names. */
export function completionSchema(tables: TableColumns[]): Record<string, string[]> {
  return Object.fromEntries(tables.map((t) => [t.name, t.columns]));
}

export interface SqlEditorProps {
  id: string;
  value: string;
  tables: TableColumns[];
  invalid?: boolean;
  label?: string;
  onChange: (text: string) => void;
}

/** A CodeMirror 6 SQL editor completing the world's tables and fields. */
export function SqlEditor({ id, value, tables, invalid, label, onChange }: SqlEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const language = useRef(new Compartment());
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          history(),
          closeBrackets(),
          bracketMatching(),
          autocompletion({ activateOnTyping: true }),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap]),
          language.current.of(sql({ dialect: SQLite, schema: completionSchema(tables), upperCaseKeywords: true })),
          placeholderExt("SELECT count(*) FROM refunds WHERE invoice_id = 'INV-24073'"),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ id, "aria-label": label ?? "Check (SQL, read-only)", "aria-multiline": "true", "data-testid": "sql-editor" }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) changed.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // The editor is made once; value and tables follow below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // A new value from outside (another criterion opened): replace the text,
  // but never echo what is being typed.
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) {
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({
      effects: language.current.reconfigure(sql({ dialect: SQLite, schema: completionSchema(tables), upperCaseKeywords: true })),
    });
  }, [tables]);

  return <div ref={host} className={`rf-sql${invalid ? " rf-sql-invalid" : ""}`} data-testid="sql-host" />;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "(empty)";
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

export interface QueryPreviewProps {
  query: string;
  runs: RunChoice[];
  preview: (query: string, run: string) => Promise<QueryPreview>;
  /** How long typing must pause before the preview runs again. */
  delayMs?: number;
}

/** What the query reads on a chosen run's final state, kept up to date as it is typed. */
export function QueryPreviewPanel({ query, runs, preview, delayMs = 350 }: QueryPreviewProps) {
  const [run, setRun] = useState(runs[0]?.id ?? "solution");
  const [result, setResult] = useState<QueryPreview | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setBusy(true);
    const t = setTimeout(() => {
      preview(query, run)
        .then((p) => {
          if (mine !== seq.current) return;
          setResult(p);
          setFailed(null);
        })
        .catch((e: { message?: string }) => {
          if (mine !== seq.current) return;
          setResult(null);
          setFailed(e?.message ?? String(e));
        })
        .finally(() => mine === seq.current && setBusy(false));
    }, delayMs);
    return () => clearTimeout(t);
  }, [query, run, preview, delayMs]);
  const problem = failed ?? result?.error ?? null;
  return (
    <div className="rf-preview" data-testid="query-preview" data-busy={busy}>
      <div className="rf-row">
        <label className="rf-label" htmlFor="preview-run">
          What it reads at the end of
        </label>
        <select id="preview-run" value={run} onChange={(e) => setRun(e.target.value)} data-testid="preview-run">
          {runs.length === 0 && <option value="solution">The task's reference solution</option>}
          {runs.map((r) => (
            <option key={r.id} value={r.id}>
              {r.label}
            </option>
          ))}
        </select>
        {busy && <span className="small muted">Reading…</span>}
      </div>
      {problem && (
        <div className="rf-problem" role="alert" data-testid="preview-problem">
          {problem}
        </div>
      )}
      {result && !result.error && (
        <>
          <div className="small muted" data-testid="preview-count">
            {result.total === 0
              ? "No rows: the check reads nothing here."
              : `${result.total} row${result.total === 1 ? "" : "s"}${result.rows.length < result.total ? `, the first ${result.rows.length} shown` : ""}. A check reads the first field of the first row.`}
          </div>
          {result.rows.length > 0 && (
            <div className="rf-preview-scroll">
              <table className="rf-preview-table" data-testid="preview-rows">
                <thead>
                  <tr>
                    {result.columns.map((c) => (
                      <th key={c} scope="col">
                        {c}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {result.rows.map((r, i) => (
                    <tr key={i}>
                      {r.map((v, j) => (
                        <td key={j} title={cell(v)}>
                          {cell(v)}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </div>
  );
}
