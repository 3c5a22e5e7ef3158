import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { issueRefund, step } from "../test/fixtures";
import { ReviewDialog } from "./ReviewDialog";
import { StepResult } from "./StepResult";
import { resultLine, Timeline } from "./Timeline";
import { ToolForm } from "./ToolForm";
import { Modal } from "./Modal";
import { moveBetweenTabs } from "../lib/tabs";
import { ToolPalette } from "./ToolPalette";
import { Records } from "./Records";
import type { ViewInfo } from "../bindings/ViewInfo";
import { lookupCustomer } from "../test/fixtures";
import type { ToolInfo } from "../bindings/ToolInfo";

describe("Timeline", () => {
  it("shows each step with its result, undone steps and refusals in plain words", () => {
    const steps = [
      step({ idx: 0 }),
      step({
        idx: 1,
        action: { tool: "issue_refund", args: { invoice_id: "INV-24073", amount: 600 } },
        ok: false,
        text: "Error: You can't refund more than was paid.",
        content: null,
        error: { code: "guard_failed", message: "You can't refund more than was paid." },
      }),
      step({ idx: 2, action: { message: "Hello Dana" }, text: "Thanks!", retracted: true }),
    ];
    render(<Timeline steps={steps} tools={[lookupCustomer, issueRefund]} editable onAnnotate={vi.fn()} />);
    const entries = screen.getAllByTestId("timeline-entry");
    expect(entries).toHaveLength(3);
    expect(entries[0]?.textContent).toContain("Look up customer");
    expect(entries[1]?.textContent).toContain("Refused");
    expect(entries[1]?.textContent).toContain("You can't refund more than was paid.");
    expect(entries[2]?.textContent).toContain("Undone");
    expect(screen.getByText(/2 actions · 1 undone · all saved/)).toBeTruthy();
  });

  it("saves the rationale when the field loses focus, and toggles a flag", async () => {
    const onAnnotate = vi.fn(async () => undefined);
    render(<Timeline steps={[step({ idx: 4 })]} tools={[lookupCustomer]} editable onAnnotate={onAnnotate} />);
    const why = screen.getByTestId("rationale");
    fireEvent.change(why, { target: { value: "Confirm the account first" } });
    fireEvent.blur(why);
    await waitFor(() => expect(onAnnotate).toHaveBeenCalledWith(4, "Confirm the account first", null));
    fireEvent.click(screen.getByTestId("flag"));
    await waitFor(() =>
      expect(onAnnotate).toHaveBeenLastCalledWith(4, "Confirm the account first", "Needs a second look"),
    );
  });
});

describe("resultLine", () => {
  it("names an opened record's fields with the world's labels, else readably", () => {
    // The app sends no text when it is only the data's JSON: the line comes from the data.
    const opened = step({
      action: { tool: "view_users", args: { key: "mia_li_3668" } },
      text: "",
      content: { user_id: "mia_li_3668", name: "Mia Li", date_of_birth: "1990-04-05" },
    });
    expect(resultLine(opened, { user_id: "Customer id" })).toBe(
      "Customer id: mia_li_3668 · Name: Mia Li · Date of birth: 1990-04-05",
    );
    const listing = step({ action: { tool: "view_users", args: {} }, text: "", content: { columns: [], rows: [], total: 3 } });
    expect(resultLine(listing)).toBe("3 records");
  });
});

describe("StepResult", () => {
  it("shows arguments the engine refused as plain sentences, from the problems' data", () => {
    const refused = step({
      action: { tool: "issue_refund", args: { invoice_id: "24073", amount: "lots" } },
      ok: false,
      text: 'Error: invalid arguments for issue_refund: "ticket_id" is a required property',
      content: null,
      error: {
        code: "invalid_arguments",
        message: 'invalid arguments for issue_refund: "ticket_id" is a required property',
        problems: [
          { field: "ticket_id", keyword: "required", expected: null },
          { field: "amount", keyword: "type", expected: "number" },
        ],
      },
    });
    render(<StepResult step={refused} />);
    const shown = screen.getByTestId("step-error").textContent ?? "";
    expect(shown).toContain("Some details are missing or not in the expected form");
    expect(shown).toContain("Ticket id is required. Amount must be a number.");
    expect(shown).not.toContain("invalid arguments for");
  });
});

describe("ToolForm", () => {
  it("draws the schema's fields and will not run with missing details", async () => {
    const onRun = vi.fn();
    render(
      <ToolForm tool={issueRefund} data={{}} onData={vi.fn()} onRun={onRun} disabled={false} busy={false} lastStep={null} />,
    );
    expect(screen.getByLabelText(/Invoice id/)).toBeTruthy();
    expect(screen.getByLabelText(/Reason/).tagName).toBe("TEXTAREA");
    fireEvent.click(screen.getByTestId("run"));
    await waitFor(() => expect(screen.getAllByText("Please fill this in.").length).toBeGreaterThan(0));
    expect(onRun).not.toHaveBeenCalled();
  });

  it("runs with the filled-in details, leaving empty ones out", async () => {
    const onRun = vi.fn();
    const data = { invoice_id: "INV-24073", amount: 79, reason: "Duplicate charge", ticket_id: "T-1042" };
    render(
      <ToolForm tool={issueRefund} data={data} onData={vi.fn()} onRun={onRun} disabled={false} busy={false} lastStep={null} />,
    );
    fireEvent.click(screen.getByTestId("run"));
    await waitFor(() => expect(onRun).toHaveBeenCalledWith(data));
  });

  it("shows the last result of this tool, and a refusal in plain words", () => {
    const failed = step({
      action: { tool: "issue_refund", args: {} },
      ok: false,
      error: { code: "guard_failed", message: "Refunds over $500.00 need approval." },
    });
    render(
      <ToolForm tool={issueRefund} data={{}} onData={vi.fn()} onRun={vi.fn()} disabled={false} busy={false} lastStep={failed} />,
    );
    const err = screen.getByTestId("step-error");
    expect(err.textContent).toContain("The system refused this action");
    expect(err.textContent).toContain("Refunds over $500.00 need approval.");
  });
});

describe("ToolPalette", () => {
  it("filters by name and picks with the keyboard", () => {
    const onPick = vi.fn();
    render(<ToolPalette tools={[lookupCustomer, issueRefund]} onPick={onPick} onClose={vi.fn()} />);
    const input = screen.getByLabelText("Tool name");
    fireEvent.change(input, { target: { value: "refund" } });
    expect(screen.getAllByRole("option")).toHaveLength(1);
    fireEvent.keyDown(input, { key: "Enter" });
    expect(onPick).toHaveBeenCalledWith(issueRefund);
  });

  it("puts tools before record lists, even when the list's name matches better", () => {
    const refundsList: ToolInfo = {
      ...lookupCustomer,
      name: "view_refunds",
      title: "Refunds",
      description: "All refunds issued.",
      view: "refunds",
    };
    const onPick = vi.fn();
    render(<ToolPalette tools={[refundsList, issueRefund]} onPick={onPick} onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText("Tool name"), { target: { value: "refund" } });
    const options = screen.getAllByRole("option");
    expect(options.map((o) => o.querySelector(".palette-title")?.textContent)).toEqual(["Issue refund", "Refunds list"]);
    fireEvent.keyDown(screen.getByLabelText("Tool name"), { key: "Enter" });
    expect(onPick).toHaveBeenCalledWith(issueRefund);
  });
});

describe("Modal", () => {
  it("starts on the primary button, not Close, and keeps Tab inside", async () => {
    render(
      <>
        <button type="button">Outside</button>
        <Modal
          title="Check"
          onClose={vi.fn()}
          footer={
            <>
              <button type="button">Back</button>
              <button type="button" className="btn-primary">
                Go
              </button>
            </>
          }
        >
          <p>Body</p>
        </Modal>
      </>,
    );
    await waitFor(() => expect(document.activeElement?.textContent).toBe("Go"));
    await userEvent.tab();
    // From the last control, Tab wraps to the first one in the dialog (Close), never to the page behind.
    expect(document.activeElement?.getAttribute("aria-label")).toBe("Close");
    await userEvent.tab({ shift: true });
    expect(document.activeElement?.textContent).toBe("Go");
  });

  it("runs its main action on Ctrl+Enter from anywhere in it, and closes on Esc", () => {
    const onConfirm = vi.fn();
    const onClose = vi.fn();
    render(
      <Modal title="Check" onClose={onClose} onConfirm={onConfirm}>
        <button type="button">Somewhere</button>
      </Modal>,
    );
    fireEvent.keyDown(screen.getByLabelText("Close"), { key: "Enter", ctrlKey: true });
    expect(onConfirm).toHaveBeenCalledTimes(1);
    expect(onClose).not.toHaveBeenCalled();
    fireEvent.keyDown(screen.getByText("Somewhere"), { key: "Escape" });
    expect(onClose).toHaveBeenCalledTimes(1);
  });
});

describe("ReviewDialog", () => {
  it("shows what changed, before and after, and the final message", () => {
    const onSubmit = vi.fn();
    render(
      <ReviewDialog
        review={{
          tables: [
            {
              table: "invoices",
              label: "Customer invoices",
              added: [],
              removed: [],
              changed: [
                { key: "INV-24073", fields: [{ field: "refunded_cents", label: "Refunded so far", before: 0, after: 7900 }] },
              ],
            },
            {
              table: "refunds",
              label: null,
              added: [{ key: "RF-25001", fields: [{ field: "amount_cents", label: null, before: null, after: 7900 }] }],
              removed: [],
              changed: [],
            },
          ],
          final_message: "I've refunded the extra $79.00.",
          steps_kept: 6,
          steps_undone: 1,
          messages_sent: 1,
          active_ms: 125_000,
          done: true,
        }}
        error={null}
        submitting={false}
        onSubmit={onSubmit}
        onCancel={vi.fn()}
      />,
    );
    const diff = screen.getByTestId("diff");
    // Headings: the world's title of each table, else its name made readable.
    expect([...diff.querySelectorAll("h4")].map((h) => h.textContent)).toEqual(["Customer invoices", "Refunds"]);
    expect(diff.textContent).toContain("INV-24073");
    // The world's label, and cents read as money whatever the label.
    expect(diff.textContent).toContain("Refunded so far0.00→79.00");
    expect(diff.textContent).toContain("RF-25001");
    // No label: the name made readable, without its unit.
    expect(diff.textContent).toContain("Amount79.00");
    expect(screen.getByTestId("final-message").textContent).toBe("I've refunded the extra $79.00.");
    fireEvent.click(screen.getByTestId("confirm-submit"));
    expect(onSubmit).toHaveBeenCalled();
  });

  it("submits with Ctrl+Enter wherever focus is, and not while submitting", async () => {
    const onSubmit = vi.fn();
    const review = {
      tables: [],
      final_message: null,
      steps_kept: 1,
      steps_undone: 0,
      messages_sent: 0,
      active_ms: 1000,
      done: true,
    };
    const { rerender } = render(
      <ReviewDialog review={review} error={null} submitting={false} onSubmit={onSubmit} onCancel={vi.fn()} />,
    );
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("confirm-submit")));
    fireEvent.keyDown(screen.getByLabelText("Close"), { key: "Enter", ctrlKey: true });
    expect(onSubmit).toHaveBeenCalledTimes(1);
    rerender(<ReviewDialog review={review} error={null} submitting onSubmit={onSubmit} onCancel={vi.fn()} />);
    fireEvent.keyDown(document.body, { key: "Enter", ctrlKey: true });
    expect(onSubmit).toHaveBeenCalledTimes(1);
  });
});

describe("moveBetweenTabs", () => {
  it("moves focus with the arrows, wrapping, skips disabled tabs, and never activates", () => {
    const onOpen = vi.fn();
    render(
      <div role="tablist" onKeyDown={moveBetweenTabs}>
        {["Tickets", "Invoices", "Refunds"].map((name) => (
          <button key={name} type="button" role="tab" onClick={onOpen} disabled={name === "Invoices"}>
            {name}
          </button>
        ))}
      </div>,
    );
    const tickets = screen.getByText("Tickets");
    tickets.focus();
    fireEvent.keyDown(tickets, { key: "ArrowRight" });
    expect(document.activeElement?.textContent).toBe("Refunds");
    fireEvent.keyDown(document.activeElement as HTMLElement, { key: "ArrowRight" });
    expect(document.activeElement?.textContent).toBe("Tickets");
    fireEvent.keyDown(tickets, { key: "ArrowLeft" });
    expect(document.activeElement?.textContent).toBe("Refunds");
    fireEvent.keyDown(document.activeElement as HTMLElement, { key: "Home" });
    expect(document.activeElement?.textContent).toBe("Tickets");
    expect(onOpen).not.toHaveBeenCalled();
  });
});

describe("Records", () => {
  const users: ViewInfo = {
    name: "users",
    tool: "view_users",
    title: "Customers",
    description: "Customer profiles by user id.",
    columns: ["user_id", "name", "city", "state", "membership", "reservations"],
    key: "user_id",
    has_record: true,
    expert_only: true,
    labels: { user_id: "Customer id", membership: "Membership level" },
  };
  const listing = step({
    action: { tool: "view_users", args: { limit: 200 } },
    content: {
      columns: users.columns,
      rows: [{ user_id: "mia_li_3668", name: "Mia Li", city: "Austin", state: "TX", membership: "gold", reservations: 3 }],
      total: 1,
    },
  });

  it("says an expert-only list is not given to agents, and hides columns without a look-up", async () => {
    const onRun = vi.fn();
    render(
      <Records views={[users]} steps={[listing]} disabled={false} busy={false} onRun={onRun} active="users" onActive={() => {}} />,
    );
    expect(screen.getByTestId("expert-only").textContent).toContain("an AI agent doing this task is not given it");
    expect(screen.getByRole("columnheader", { name: /City/ })).toBeTruthy();
    await userEvent.click(screen.getByText("Columns"));
    await userEvent.click(screen.getByRole("checkbox", { name: "City" }));
    expect(screen.queryByRole("columnheader", { name: /City/ })).toBeNull();
    expect(screen.getByText("Columns (5 of 6)")).toBeTruthy();
    expect(screen.getByRole("columnheader", { name: /Name/ })).toBeTruthy();
    // Headers and the column chooser use the world's labels, else the name made readable.
    expect(screen.getByRole("columnheader", { name: /Membership level/ })).toBeTruthy();
    expect(screen.getByRole("columnheader", { name: /Customer id/ })).toBeTruthy();
    expect(screen.getByRole("checkbox", { name: "Membership level" })).toBeTruthy();
    expect(screen.queryByRole("columnheader", { name: /^User id/ })).toBeNull();
    expect(onRun).not.toHaveBeenCalled();
  });

  it("says nothing of agents for a list everyone has", () => {
    render(
      <Records
        views={[{ ...users, expert_only: false }]}
        steps={[listing]}
        disabled={false}
        busy={false}
        onRun={() => {}}
        active="users"
        onActive={() => {}}
      />,
    );
    expect(screen.queryByTestId("expert-only")).toBeNull();
  });
});
