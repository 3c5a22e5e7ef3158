import { fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { TableColumns } from "../../bindings/TableColumns";
import type { ToolChoice } from "../../bindings/ToolChoice";
import { CriterionForm } from "./CriterionForm";
import { CriterionList, pointsLabel } from "./CriterionList";
import { LintPanel } from "./LintPanel";
import { countChoice, parseRecordQuery, recordQuery, withCount, type Fields } from "./fields";

const tables: TableColumns[] = [
  { name: "tickets", key: "id", columns: ["id", "status", "resolution"] },
  { name: "invoices", key: "id", columns: ["id", "refunded_cents"] },
];
const refundSchema = {
  type: "object",
  properties: {
    invoice_id: { type: "string", description: "The invoice, e.g. INV-24073" },
    amount: { type: "number", description: "Dollars" },
    reason: { type: "string", enum: ["duplicate", "goodwill"] },
    notify: { type: "boolean" },
  },
  required: ["invoice_id", "amount"],
  additionalProperties: false,
};
const tools: ToolChoice[] = [
  {
    name: "issue_refund",
    title: "Issue refund",
    writes: true,
    params: [
      { name: "invoice_id", kind: "string", description: "", choices: [] },
      { name: "amount", kind: "number", description: "", choices: [] },
    ],
    schema: refundSchema,
  },
  { name: "close_ticket", title: "Close ticket", writes: true, params: [], schema: { type: "object", properties: {} } },
  { name: "get_invoice", title: "Look up invoice", writes: false, params: [], schema: { type: "object", properties: { invoice_id: { type: "string" } } } },
];

function form(criterion: Fields, problems = [] as Parameters<typeof CriterionForm>[0]["problems"]) {
  const onChange = vi.fn();
  const view = render(<CriterionForm criterion={criterion} problems={problems} tools={tools} tables={tables} sections={[]} onChange={onChange} />);
  return { onChange, view, last: () => onChange.mock.calls.at(-1)?.[0] as Fields };
}

describe("the plain words of a criterion", () => {
  const drafted = { id: "t", kind: "state", description: "Ticket T-1042 ends up open", query: recordQuery({ table: "tickets", key: "id", record: "T-1042", field: "status" }), expect: { equals: "open" } };

  it("are dropped when the check changes, so the sentence describes the new check", () => {
    const { last, view } = form(drafted);
    fireEvent.change(within(view.container).getByLabelText("Ends up as"), { target: { value: "closed" } });
    expect(last().description).toBeUndefined();
    expect(last().expect).toEqual({ equals: "closed" });
  });

  it("stay when only the points change", () => {
    const { last, view } = form(drafted);
    fireEvent.change(within(view.container).getByLabelText("Points"), { target: { value: "3" } });
    expect(last().description).toBe("Ticket T-1042 ends up open");
  });

  it("stay once the annotator has written them here", () => {
    const { last, view, onChange } = form(drafted);
    const q = within(view.container);
    fireEvent.change(q.getByLabelText("In plain words (what an expert reads)"), { target: { value: "The ticket is closed" } });
    view.rerender(<CriterionForm criterion={last()} problems={[]} tools={tools} tables={tables} sections={[]} onChange={onChange} />);
    fireEvent.change(q.getByLabelText("Ends up as"), { target: { value: "closed" } });
    expect(last().description).toBe("The ticket is closed");
  });
});

describe("the state builder", () => {
  it("keeps an amount as typed, key by key (79.00 is not entered as 790)", () => {
    let c: Fields = { id: "t", kind: "state", query: recordQuery({ table: "tickets", key: "id", record: "T-1042", field: "status" }), expect: { equals: "open" } };
    const onChange = vi.fn((next: Fields) => (c = next));
    const view = render(<CriterionForm criterion={c} problems={[]} tools={tools} tables={tables} sections={[]} onChange={onChange} />);
    const box = within(view.container).getByLabelText("Ends up as") as HTMLInputElement;
    for (const typedSoFar of ["7", "79", "79.", "79.0", "79.00"]) {
      fireEvent.change(box, { target: { value: typedSoFar } });
      view.rerender(<CriterionForm criterion={c} problems={[]} tools={tools} tables={tables} sections={[]} onChange={onChange} />);
      expect(box.value).toBe(typedSoFar);
    }
    expect(c.expect).toEqual({ equals: 79 });
  });

  it("writes a record check from table, record, field and expected value", () => {
    const { onChange, last, view } = form({ id: "t", kind: "state", query: recordQuery({ table: "tickets", key: "id", record: "T-1042", field: "status" }), expect: { equals: "open" } });
    const inputs = within(view.container);
    fireEvent.change(inputs.getByLabelText("Ends up as"), { target: { value: "closed" } });
    expect(last().query).toBe(`SELECT "status" FROM "tickets" WHERE "id" = 'T-1042'`);
    expect(last().expect).toEqual({ equals: "closed" });
    fireEvent.change(inputs.getByLabelText("Record (id)"), { target: { value: "T-1049" } });
    expect(parseRecordQuery(String(last().query))).toEqual({ table: "tickets", key: "id", record: "T-1049", field: "status" });
    fireEvent.change(inputs.getByLabelText("Ends up as"), { target: { value: "7900" } });
    expect(last().expect).toEqual({ equals: 7900 });
    fireEvent.change(inputs.getByLabelText("How"), { target: { value: "contains" } });
    expect(last().expect).toEqual({ contains: "open" });
    expect(onChange).toHaveBeenCalledTimes(4);
  });

  it("switches to 'nothing else changed' and lists what may change", () => {
    const { last, view } = form({ id: "g", kind: "state", changes: { none: true }, gate: true });
    expect(screen.getByText("None: nothing may change.")).toBeTruthy();
    fireEvent.click(within(view.container).getByText("Allow another"));
    expect(last().changes).toEqual({ only: [{ table: "tickets" }] });
  });

  it("keeps SQL it cannot build as a custom check", () => {
    form({ id: "c", kind: "state", query: "SELECT count(*) FROM refunds", expect: { equals: 1 } });
    // The advanced view: a CodeMirror editor holding the query.
    expect(screen.getByLabelText("Check (SQL, read-only)").textContent).toBe("SELECT count(*) FROM refunds");
    expect((screen.getByLabelText("Advanced: the check in SQL") as HTMLInputElement).checked).toBe(true);
  });
});

describe("the action form", () => {
  it("sets the tool, argument values and how often", () => {
    const { last, view } = form({ id: "a", kind: "action", tool: "issue_refund", points: 2 });
    const q = within(view.container);
    fireEvent.change(q.getByLabelText("Invoice id"), { target: { value: "INV-24073" } });
    expect(last().args).toEqual({ invoice_id: "INV-24073" });
    fireEvent.change(q.getByLabelText("How often"), { target: { value: "exactly-once" } });
    expect(last().count).toEqual({ min: 1, max: 1 });
  });

  it("builds the argument form from the tool's JSON Schema: its types and choices, nothing required", () => {
    const { last, onChange, view } = form({ id: "a", kind: "action", tool: "issue_refund", points: 2 });
    const q = within(view.container);
    expect(onChange).not.toHaveBeenCalled();
    const amount = q.getByLabelText("Amount") as HTMLInputElement;
    expect(amount.type).toBe("number");
    expect(amount.required).toBe(false);
    fireEvent.change(amount, { target: { value: "79" } });
    expect(last().args).toEqual({ amount: 79 });
    const reason = q.getByLabelText("Reason") as HTMLSelectElement;
    expect([...reason.options].map((o) => o.textContent)).toEqual(["(any)", "duplicate", "goodwill"]);
    const notify = q.getByLabelText("Notify") as HTMLSelectElement;
    expect(notify.tagName).toBe("SELECT");
  });

  it("keeps a loose matcher as the file writes it, and clears an argument to match any value", () => {
    const args = { invoice_id: "INV-24073", amount: { number: 79, tolerance: 0.005 } };
    const { last, view } = form({ id: "a", kind: "action", tool: "issue_refund", args, points: 2 });
    const q = within(view.container);
    const loose = view.container.querySelector("[data-arg=amount]") as HTMLInputElement;
    expect(JSON.parse(loose.value)).toEqual({ number: 79, tolerance: 0.005 });
    expect(q.queryByLabelText("Amount")).toBeNull();
    fireEvent.change(q.getByLabelText("Invoice id"), { target: { value: "" } });
    expect(last().args).toEqual({ amount: { number: 79, tolerance: 0.005 } });
    fireEvent.change(loose, { target: { value: "{oops" } });
    fireEvent.blur(loose);
    expect(view.container.textContent).toContain("Write it as in the rubric file");
  });

  it("sets the order of steps and whether refused attempts count", () => {
    const { last, view } = form({ id: "a", kind: "action", tool: "issue_refund", points: 2 });
    const q = within(view.container);
    fireEvent.change(q.getByLabelText("Only after"), { target: { value: "get_invoice" } });
    expect(last().after).toEqual({ tool: "get_invoice" });
    fireEvent.change(q.getByLabelText("Before"), { target: { value: "close_ticket" } });
    expect(last().before).toEqual({ tool: "close_ticket" });
    fireEvent.click(q.getByLabelText("Refused attempts count"));
    expect(last().include_failed).toBe(true);
  });

  it("keeps an order pattern the file details, and says so", () => {
    const c = { id: "a", kind: "action", tool: "issue_refund", points: 2, after: { message: { number: 79 } } };
    const { view, onChange } = form(c);
    const q = within(view.container);
    expect((q.getByLabelText("Only after") as HTMLSelectElement).value).toBe("(detailed)");
    expect(view.container.textContent).toContain("The rubric file says more about that step");
    fireEvent.change(q.getByLabelText("Only after"), { target: { value: "(detailed)" } });
    expect(onChange).not.toHaveBeenCalled();
  });

  it("counts at least or at most a number of times", () => {
    expect(withCount({ tool: "x", points: 1 }, "at-most", 2).count).toEqual({ max: 2 });
    expect(countChoice({ count: { max: 2 } })).toEqual({ choice: "at-most", n: 2 });
    expect(countChoice({ count: { min: 3 } })).toEqual({ choice: "at-least", n: 3 });
    expect(countChoice({ count: { min: 1 } })).toEqual({ choice: "at-least-once", n: 1 });
  });

  it("'never' makes a rule that costs points, and back", () => {
    const never = withCount({ tool: "close_ticket", points: 3 }, "never", 0);
    expect(never.points).toBe(-3);
    expect(countChoice(never).choice).toBe("never");
    expect(withCount(never, "at-least-once", 1).points).toBe(3);
  });
});

describe("the message form", () => {
  it("sets the value, its kind, and whether it is the only answer", () => {
    const { last, view } = form({ id: "m", kind: "message", number: "79.00", points: 2 });
    const q = within(view.container);
    expect((q.getByLabelText("Value") as HTMLInputElement).value).toBe("79.00");
    fireEvent.change(q.getByLabelText("What must be said"), { target: { value: "contains" } });
    expect(last()).toMatchObject({ contains: "79.00" });
    expect(last().number).toBeUndefined();
    fireEvent.click(q.getByLabelText("The only answer (no competing value of its kind)"));
    expect(last().commit).toBe(false);
  });
});

describe("problems", () => {
  it("are shown at their field, in the engine's plain words", () => {
    form({ id: "a", kind: "action", tool: "teleport" }, [
      { criterion: 0, field: "tool", message: "There is no tool `teleport` in world `support-desk`" },
      { criterion: 0, field: null, message: "Something about the whole criterion" },
    ]);
    const tool = document.querySelector("[data-field=tool]")!;
    expect(within(tool as HTMLElement).getByRole("alert").textContent).toContain("no tool `teleport`");
    expect(screen.getAllByRole("alert")).toHaveLength(2);
  });
});

describe("the criterion list", () => {
  const criteria: Fields[] = [
    { id: "a", kind: "state", points: 4, gate: true },
    { id: "b", kind: "action", points: -3 },
    { id: "c", kind: "message", points: 1 },
  ];

  it("reads as sentences with points, gates and penalties", () => {
    render(<CriterionList criteria={criteria} sentences={["A", "B", "C"]} problems={[]} selected={null} onOpen={vi.fn()} onMove={vi.fn()} onDelete={vi.fn()} />);
    const rows = screen.getAllByTestId("criterion");
    expect(rows.map((r) => r.querySelector("[data-testid=sentence]")?.textContent)).toEqual(["A", "B", "C"]);
    expect(rows[0]!.textContent).toContain("Gate");
    expect(pointsLabel(-3)).toBe("penalty −3");
    expect(pointsLabel(4)).toBe("+4 points");
  });

  it("is worked from the keyboard: Enter opens, Alt+arrows reorder, Delete removes", () => {
    const onOpen = vi.fn();
    const onMove = vi.fn();
    const onDelete = vi.fn();
    render(<CriterionList criteria={criteria} sentences={["A", "B", "C"]} problems={[]} selected={null} onOpen={onOpen} onMove={onMove} onDelete={onDelete} />);
    const rows = screen.getAllByTestId("criterion");
    fireEvent.keyDown(rows[1]!, { key: "Enter" });
    expect(onOpen).toHaveBeenCalledWith(1);
    fireEvent.keyDown(rows[1]!, { key: "ArrowUp", altKey: true });
    expect(onMove).toHaveBeenCalledWith(1, 0);
    fireEvent.keyDown(rows[0]!, { key: "ArrowUp", altKey: true });
    expect(onMove).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(rows[2]!, { key: "Delete" });
    expect(onDelete).toHaveBeenCalledWith(2);
  });
});

describe("the lint panel", () => {
  it("shows progress, then survivors that open the criterion to tighten", () => {
    const onOpen = vi.fn();
    const onAdd = vi.fn();
    const props = { sentenceOf: (id: string) => (id === "told-amount" ? "The customer is told $79.00" : null), onLint: vi.fn(), onOpenCriterion: onOpen, onAddFor: onAdd, disabled: false };
    const { rerender } = render(<LintPanel running progress={{ done: 3, total: 12 }} result={null} {...props} />);
    expect(screen.getByTestId("lint-progress").textContent).toContain("Run 3 of 12");
    rerender(
      <LintPanel
        running={false}
        progress={null}
        result={{
          ok: false,
          problems: ["cheat class near-miss: …"],
          gold: [{ source: "solution", best: 1 }],
          do_nothing: { source: "do nothing", best: 0 },
          mutants: 10,
          caught: 10,
          mutation_score: 1,
          classes: [{ class: "near-miss", label: "An answer that is almost right", total: 2, caught: 1, equivalent: 0 }],
          survivors: [
            { mutant_id: "n", class: "near-miss", sentence: "saying $79.01 instead of $79.00 still passes (scores 1.0)", criterion: "told-amount", equivalent: null },
            { mutant_id: "d", class: "disclosure", sentence: "telling another customer's email still passes", criterion: null, equivalent: null },
          ],
          millis: 420,
        }}
        {...props}
      />,
    );
    const survivors = screen.getAllByTestId("survivor");
    expect(survivors[0]!.textContent).toContain("Saying $79.01 instead of $79.00 still passes");
    expect(survivors[0]!.textContent).toContain("“The customer is told $79.00”");
    fireEvent.click(survivors[0]!);
    expect(onOpen).toHaveBeenCalledWith("told-amount");
    fireEvent.click(survivors[1]!);
    expect(onAdd).toHaveBeenCalledWith("disclosure");
    expect(screen.getByText("✓ The gold run (the reference solution) scores 1.0")).toBeTruthy();
  });
});
