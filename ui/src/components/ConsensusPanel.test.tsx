import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Consensus } from "../bindings/Consensus";
import { ConsensusPanel, consensusSummary } from "./ConsensusPanel";

const differing: Consensus = {
  runs: ["a", "b"],
  fields: [
    { table: "invoices", key: "INV-24073", field: "refunded_cents", before: 0, values: [7900, 5000], agreed: false },
    { table: "tickets", key: "T-1042", field: "status", before: "open", values: ["closed", "closed"], agreed: true },
  ],
  actions: [
    { tool: "issue_refund", args: { amount: 79 }, runs: [true, false], agreed: false },
    { tool: "get_ticket", args: { ticket_id: "T-1042" }, runs: [true, true], agreed: true },
  ],
  messages: [1, 2],
  fields_agreed: 1,
  actions_agreed: 1,
  unanimous: false,
};

describe("demonstration agreement", () => {
  it("sums up where the runs part, and marks the differing rows", () => {
    expect(consensusSummary(differing, ["Renee", "Lee"])).toBe(
      "2 runs (Renee, Lee): the same final value on 1 of 2 changed fields, and 1 of 2 tool calls made by everyone.",
    );
    expect(consensusSummary({ ...differing, unanimous: true }, ["Renee", "Lee"])).toBe(
      "2 runs (Renee, Lee) end the same way and made the same tool calls.",
    );
    const row = (n: number, performer: string) =>
      ({ episode_id: String(n), performer, submitted_at: null }) as unknown as import("../bindings/QueueRow").QueueRow;
    render(
      <ConsensusPanel
        view={{
          task_title: "t",
          runs: [row(1, "Renee"), row(2, "Lee")],
          consensus: differing,
          table_titles: { invoices: "Customer invoices" },
          column_labels: { invoices: { refunded_cents: "Refunded so far" } },
          tool_titles: { issue_refund: "Issue a refund" },
        }}
        onClose={() => {}}
      />,
    );
    const fields = screen.getByTestId("consensus-fields");
    expect(fields.querySelectorAll("tr[data-agreed=false]").length).toBe(1);
    // The world's words for tables and fields; a table or field it leaves unnamed, humanised.
    expect(fields.textContent).toContain("Customer invoices INV-24073");
    expect(fields.textContent).toContain("Refunded so far");
    expect(fields.textContent).not.toContain("refunded_cents");
    expect(fields.textContent).toContain("Tickets T-1042");
    expect(fields.textContent).toContain("7900");
    const calls = screen.getByTestId("consensus-actions").textContent;
    expect(calls).toContain("Messages to the customer");
    // Tool calls by the tools' titles; a tool the view has no title for, humanised.
    expect(calls).toContain("Issue a refund");
    expect(calls).toContain("Get ticket");
    expect(calls).not.toContain("issue_refund");
  });
});
