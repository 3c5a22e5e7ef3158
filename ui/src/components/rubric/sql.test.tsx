import { CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { EditorView } from "@codemirror/view";
import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { QueryPreview } from "../../bindings/QueryPreview";
import type { RubricComparison } from "../../bindings/RubricComparison";
import type { RubricVersion } from "../../bindings/RubricVersion";
import type { TableColumns } from "../../bindings/TableColumns";
import { CriterionForm } from "./CriterionForm";
import { completionSchema, QueryPreviewPanel, SqlEditor } from "./SqlEditor";
import { VersionsPanel } from "./VersionsPanel";

const tables: TableColumns[] = [
  { name: "refunds", key: "id", columns: ["id", "invoice_id", "amount_cents", "reason"] },
  { name: "invoices", key: "id", columns: ["id", "refunded_cents"] },
];

function editorOf(container: HTMLElement): EditorView {
  const content = container.querySelector(".cm-content") as HTMLElement;
  const view = EditorView.findFromDOM(content);
  if (!view) throw new Error("no editor");
  return view;
}

async function completions(view: EditorView, at: number): Promise<string[]> {
  const sources = view.state.languageDataAt<(c: CompletionContext) => CompletionResult | Promise<CompletionResult | null> | null>("autocomplete", at);
  const out: string[] = [];
  for (const source of sources) {
    const r = await source(new CompletionContext(view.state, at, true));
    if (r) out.push(...r.options.map((o) => o.label));
  }
  return out;
}

describe("the SQL view", () => {
  it("completes the world's tables and their fields", async () => {
    expect(completionSchema(tables)).toEqual({ refunds: ["id", "invoice_id", "amount_cents", "reason"], invoices: ["id", "refunded_cents"] });
    const onChange = vi.fn();
    const { container } = render(<SqlEditor id="q" value="SELECT  FROM refunds" tables={tables} onChange={onChange} />);
    const view = editorOf(container);
    const labels = await completions(view, "SELECT ".length);
    expect(labels).toEqual(expect.arrayContaining(["refunds", "invoices"]));
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: "SELECT refunds." } });
    const fields = await completions(view, view.state.doc.length);
    expect(fields).toEqual(expect.arrayContaining(["invoice_id", "amount_cents", "reason"]));
    expect(fields).not.toContain("refunded_cents");
    expect(onChange).toHaveBeenLastCalledWith("SELECT refunds.");
  });

  it("is labelled for screen readers and follows a value from outside without echoing it", () => {
    const onChange = vi.fn();
    const { container, rerender } = render(<SqlEditor id="q" value="SELECT 1" tables={tables} onChange={onChange} />);
    expect(screen.getByLabelText("Check (SQL, read-only)").id).toBe("q");
    rerender(<SqlEditor id="q" value="SELECT 2" tables={tables} onChange={onChange} />);
    expect(editorOf(container).state.doc.toString()).toBe("SELECT 2");
    expect(onChange).toHaveBeenCalledTimes(1);
  });

  it("is the state form's advanced view, and an edit there sets the query", () => {
    const onChange = vi.fn();
    const { container } = render(
      <CriterionForm
        criterion={{ id: "c", kind: "state", query: "SELECT count(*) FROM refunds", expect: { equals: 1 } }}
        problems={[{ criterion: 0, field: "query", message: "There is no table “nowhere” in this world's records." }]}
        tools={[]}
        tables={tables}
        sections={[]}
        onChange={onChange}
      />,
    );
    const view = editorOf(container);
    expect(view.state.doc.toString()).toBe("SELECT count(*) FROM refunds");
    expect(within(container.querySelector("[data-field=query]") as HTMLElement).getByRole("alert").textContent).toContain("no table “nowhere”");
    expect(container.querySelector(".rf-sql-invalid")).toBeTruthy();
    act(() => view.dispatch({ changes: { from: view.state.doc.length, insert: " WHERE reason = 'duplicate'" } }));
    expect(onChange.mock.calls.at(-1)?.[0].query).toBe("SELECT count(*) FROM refunds WHERE reason = 'duplicate'");
  });

  it("stays in the advanced view while SQL typed there reads like a builder check", () => {
    let c: Record<string, unknown> = { id: "n", kind: "state", changes: { none: true }, points: 1 };
    const onChange = vi.fn((next: Record<string, unknown>) => (c = next));
    const props = { problems: [], tools: [], tables, sections: [], onChange };
    const { container, rerender } = render(<CriterionForm criterion={c} {...props} />);
    fireEvent.click(screen.getByLabelText("Advanced: the check in SQL"));
    rerender(<CriterionForm criterion={c} {...props} />);
    const view = editorOf(container);
    act(() => view.dispatch({ changes: { from: 0, insert: "SELECT reason FROM refunds WHERE id = 'RF-1'" } }));
    rerender(<CriterionForm criterion={c} {...props} />);
    expect(c.query).toBe("SELECT reason FROM refunds WHERE id = 'RF-1'");
    expect(container.querySelector(".cm-content")).toBeTruthy();
    expect((screen.getByLabelText("Advanced: the check in SQL") as HTMLInputElement).checked).toBe(true);
  });
});

describe("the preview", () => {
  const runs = [
    { id: "solution", label: "The task's reference solution" },
    { id: "ep-1", label: "Approved run ep-1" },
  ];

  it("shows the rows the query reads at the end of the chosen run", async () => {
    const preview = vi.fn(
      async (): Promise<QueryPreview> => ({ columns: ["invoice_id", "amount_cents"], rows: [["INV-24073", 7900]], total: 1, error: null }),
    );
    render(<QueryPreviewPanel query="SELECT invoice_id, amount_cents FROM refunds" runs={runs} preview={preview} delayMs={0} />);
    await waitFor(() => expect(screen.getByTestId("preview-rows")).toBeTruthy());
    expect(preview).toHaveBeenLastCalledWith("SELECT invoice_id, amount_cents FROM refunds", "solution");
    expect(screen.getByTestId("preview-rows").textContent).toContain("INV-24073");
    expect(screen.getByTestId("preview-count").textContent).toContain("1 row.");
    fireEvent.change(screen.getByTestId("preview-run"), { target: { value: "ep-1" } });
    await waitFor(() => expect(preview).toHaveBeenLastCalledWith("SELECT invoice_id, amount_cents FROM refunds", "ep-1"));
  });

  it("says how many rows there were when only the first are shown", async () => {
    const preview = async (): Promise<QueryPreview> => ({ columns: ["i"], rows: Array.from({ length: 50 }, (_, i) => [i]), total: 120, error: null });
    render(<QueryPreviewPanel query="SELECT i FROM n" runs={runs} preview={preview} delayMs={0} />);
    await waitFor(() => expect(screen.getByTestId("preview-count").textContent).toContain("120 rows, the first 50 shown"));
  });

  it("shows a query that cannot run at the field, in plain words", async () => {
    const preview = async (): Promise<QueryPreview> => ({ columns: [], rows: [], total: 0, error: "There is no table “nowhere” in this world's records." });
    render(<QueryPreviewPanel query="SELECT * FROM nowhere" runs={runs} preview={preview} delayMs={0} />);
    await waitFor(() => expect(screen.getByTestId("preview-problem").textContent).toContain("no table “nowhere”"));
    expect(screen.queryByTestId("preview-rows")).toBeNull();
  });

  it("shows a run that cannot be replayed", async () => {
    const preview = async (): Promise<QueryPreview> => Promise.reject({ code: "wrong_run", message: "Run ep-9 is of another task; choose a run of this one." });
    render(<QueryPreviewPanel query="SELECT 1" runs={runs} preview={preview} delayMs={0} />);
    await waitFor(() => expect(screen.getByTestId("preview-problem").textContent).toContain("of another task"));
  });
});

describe("comparing versions", () => {
  const v = (id: number, version: string): RubricVersion => ({
    id,
    world_id: "w",
    task_id: "t",
    version,
    hash: `${id}`.repeat(12),
    path: "/x.toml",
    content: "",
    saved_by: null,
    saved_at: `2026-12-0${id}T10:00:00Z`,
  });
  const comparison: RubricComparison = {
    from_version: "1",
    to_version: "2",
    added: [{ id: "closed", sentence: "Ticket T-1042 ends up with status “closed”", points: 1 }],
    removed: [{ id: "told", sentence: "The customer is told $79.00", points: 2 }],
    changed: [{ id: "r", before: "Refund issued", after: "Refund issued", changes: ["Worth 7 points, was 4", "No longer a gate"] }],
    unchanged: 10,
    other: ["The criteria are in a different order"],
  };

  it("compares the two newest by default and reads the differences as sentences", async () => {
    const compare = vi.fn(async () => comparison);
    render(<VersionsPanel versions={[v(2, "2"), v(1, "1")]} compare={compare} />);
    fireEvent.click(screen.getByTestId("compare"));
    await waitFor(() => expect(screen.getByTestId("comparison")).toBeTruthy());
    expect(compare).toHaveBeenCalledWith(1, 2);
    expect(screen.getByTestId("compare-added").textContent).toContain("Ticket T-1042 ends up with status “closed”");
    expect(screen.getByTestId("compare-removed").textContent).toContain("The customer is told $79.00");
    expect(screen.getByTestId("compare-changed").textContent).toContain("Worth 7 points, was 4");
    expect(screen.getByTestId("comparison").textContent).toContain("1 added, 1 removed, 1 changed, 10 the same");
  });

  it("needs two different versions, and offers no comparison with one", () => {
    const { unmount } = render(<VersionsPanel versions={[v(2, "2"), v(1, "1")]} compare={vi.fn()} />);
    fireEvent.change(screen.getByTestId("compare-from"), { target: { value: "2" } });
    expect((screen.getByTestId("compare") as HTMLButtonElement).disabled).toBe(true);
    unmount();
    render(<VersionsPanel versions={[v(1, "1")]} compare={vi.fn()} />);
    expect(screen.queryByTestId("compare")).toBeNull();
  });
});
