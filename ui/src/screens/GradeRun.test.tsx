import { render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

vi.mock("../api", () => ({ api: {} }));

import type { SheetCriterion } from "../bindings/SheetCriterion";
import type { StepView } from "../bindings/StepView";
import { CriterionCard, stepLine } from "./GradeRun";

describe("a check's evidence on the grading sheet", () => {
  const check: SheetCriterion = {
    id: "nothing-else-changed",
    description: "Nothing else changed",
    guidance: "",
    scale: [],
    kind: "state",
    points: 1,
    gate: true,
    judged: false,
    automatic: false,
    evidence: {
      detail: "2 records changed that the task does not allow: Account credits CR-1 (added), Ticket messages TM-9 (changed)",
      rows: [{ cancel_at_period_end: 1, refunded_cents: 7900, "count(*)": 2 }],
      changes: [
        { table: "credits", key: "CR-1", change: "added" },
        { table: "ticket_messages", key: "TM-9", change: "changed" },
      ],
    },
    error: null,
    grade: null,
  };

  function card(labels?: Parameters<typeof CriterionCard>[0]["labels"]) {
    render(
      <CriterionCard c={check} editing={null} onEdit={vi.fn()} onChange={vi.fn()} onSave={vi.fn()} onCancel={vi.fn()} saving={false} focused={false} onFocus={vi.fn()} labels={labels} />,
    );
  }

  it("names tables and columns as the world does on screen", () => {
    card({
      table_titles: { credits: "Account credits" },
      column_labels: { subscriptions: { cancel_at_period_end: "Cancels at renewal" }, invoices: {} },
      tool_titles: {},
    });
    // The engine names changed records in the world's words; the sheet shows that once.
    expect(screen.getByTestId("evidence").textContent).toContain("does not allow: Account credits CR-1 (added)");
    expect(screen.getByTestId("evidence").textContent?.match(/CR-1/g)).toHaveLength(1);
    const found = screen.getByText(/^Found:/).textContent;
    expect(found).toBe("Found: Cancels at renewal: 1, Refunded cents: 7900, Number of records: 2");
  });

  it("falls back to readable names when the world gives none", () => {
    card();
    expect(screen.getByText(/^Found:/).textContent).toContain("Cancel at period end: 1");
  });
});

describe("a run's steps on the grading sheet", () => {
  const step = (tool: string, args: Record<string, unknown>) => ({ action: { tool, args } }) as unknown as StepView;

  it("names each tool as the expert's tool finder does", () => {
    const labels = { table_titles: {}, column_labels: {}, tool_titles: { get_ticket: "Open ticket" } };
    expect(stepLine(step("get_ticket", { ticket_id: "T-1049" }), labels)).toBe("Open ticket — Ticket id: T-1049");
    expect(stepLine(step("lookup_customer", {}), labels)).toBe("Lookup customer");
  });
});
