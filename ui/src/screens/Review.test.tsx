import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { QueueRow } from "../bindings/QueueRow";
import type { ReplayView } from "../bindings/ReplayView";
import { issueRefund, lookupCustomer, step, task } from "../test/fixtures";

const api = vi.hoisted(() => ({
  reviewQueue: vi.fn(),
  decideEpisode: vi.fn(),
  openReplay: vi.fn(),
  replayState: vi.fn(),
}));
vi.mock("../api", () => ({ api }));

import { COMMENT_NEEDED } from "../components/DecisionDialog";
import { Replay, keptUpTo, stepKey } from "./Replay";
import { ReviewQueue } from "./ReviewQueue";

function row(partial: Partial<QueueRow>): QueueRow {
  return {
    episode_id: "ep-1",
    world_id: "support-desk",
    world_name: "Brightline Support Desk",
    task_id: task.id,
    task_title: task.title,
    performer_id: "e1",
    performer: "Renee Okafor",
    is_agent: false,
    status: "submitted",
    steps: 3,
    active_ms: 65000,
    submitted_at: "2025-03-04T09:10:00Z",
    last_review: null,
    own: false,
    ...partial,
  };
}

const reviewer = {
  id: "e2",
  name: "Lee Park",
  domain: "Support",
  credentials: "",
  credentials_attested: false,
  verified: false,
  current: true,
};

const queue = {
  reviewer,
  rows: [
    row({}),
    row({ episode_id: "ep-2", performer_id: "e3", performer: "Hugo Brandt" }),
    row({ episode_id: "ep-3", task_id: "t2", task_title: "Upgrade a plan", performer_id: "e2", performer: "Lee Park", own: true }),
    row({
      episode_id: "ep-4",
      status: "approved",
      last_review: { id: 1, episode_id: "ep-4", reviewer: "Lee Park", decision: "approve", comment: "", at: "2025-03-04T10:00:00Z" },
    }),
  ],
};

beforeEach(() => {
  vi.clearAllMocks();
  api.reviewQueue.mockResolvedValue(queue);
  api.decideEpisode.mockResolvedValue({});
});

describe("ReviewQueue", () => {
  it("groups waiting recordings by task, filters by status and expert, and never offers one's own for review", async () => {
    render(<ReviewQueue onHome={vi.fn()} onReplay={vi.fn()} />);
    await screen.findByText("3 recordings waiting for review");
    expect(screen.getAllByTestId("queue-row")).toHaveLength(3);
    expect(document.querySelectorAll(".queue-group")).toHaveLength(2);
    const own = document.querySelector("[data-episode=ep-3]") as HTMLElement;
    expect(own.textContent).toContain("You recorded this; another expert reviews it.");
    expect(own.querySelector("[data-testid=approve]")).toBeNull();

    fireEvent.change(screen.getByTestId("filter-expert"), { target: { value: "e3" } });
    expect(screen.getAllByTestId("queue-row").map((r) => r.dataset.episode)).toEqual(["ep-2"]);
    fireEvent.change(screen.getByTestId("filter-expert"), { target: { value: "" } });
    fireEvent.change(screen.getByTestId("filter-status"), { target: { value: "approved" } });
    const approved = screen.getAllByTestId("queue-row");
    expect(approved.map((r) => r.dataset.episode)).toEqual(["ep-4"]);
    expect(approved[0]?.textContent).toContain("Approved by Lee Park");
    expect(approved[0]?.querySelector("[data-testid=approve]")).toBeNull();
  });

  it("will not return a recording without a comment, and sends the comment with Ctrl+Enter", async () => {
    render(<ReviewQueue onHome={vi.fn()} onReplay={vi.fn()} />);
    await screen.findByText("3 recordings waiting for review");
    const first = document.querySelector("[data-episode=ep-1]") as HTMLElement;
    fireEvent.click(first.querySelector("[data-testid=reject]") as HTMLElement);
    await screen.findByTestId("decision");
    fireEvent.click(screen.getByTestId("confirm-decision"));
    expect(screen.getByTestId("decision-error").textContent).toBe(COMMENT_NEEDED);
    fireEvent.keyDown(window, { key: "Enter", ctrlKey: true });
    expect(api.decideEpisode).not.toHaveBeenCalled();

    const comment = screen.getByTestId("decision-comment");
    expect(document.activeElement).toBe(comment);
    fireEvent.change(comment, { target: { value: "  Verify the account first " } });
    expect(screen.queryByTestId("decision-error")).toBeNull();
    fireEvent.keyDown(comment, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(api.decideEpisode).toHaveBeenCalledWith("ep-1", "reject", "Verify the account first"));
    await waitFor(() => expect(screen.queryByTestId("decision")).toBeNull());
    expect(api.reviewQueue).toHaveBeenCalledTimes(2);
  });

  it("approves without a comment and shows the store's refusal in the dialog", async () => {
    api.decideEpisode.mockRejectedValueOnce({ code: "conflict", message: "Episode ep-2 was already approved by Ines." });
    render(<ReviewQueue onHome={vi.fn()} onReplay={vi.fn()} />);
    await screen.findByText("3 recordings waiting for review");
    const second = document.querySelector("[data-episode=ep-2]") as HTMLElement;
    fireEvent.click(second.querySelector("[data-testid=approve]") as HTMLElement);
    fireEvent.click(await screen.findByTestId("confirm-decision"));
    await waitFor(() => expect(api.decideEpisode).toHaveBeenCalledWith("ep-2", "approve", ""));
    expect((await screen.findByTestId("decision-error")).textContent).toContain("already approved by Ines");
  });
});

function replay(partial: Partial<ReplayView> = {}): ReplayView {
  return {
    episode: row({}),
    task,
    tools: [lookupCustomer, issueRefund],
    steps: [
      step({ idx: 0, rationale: "Find the account first" }),
      step({ idx: 1, action: { message: "oops" }, retracted: true }),
      step({
        idx: 2,
        action: { tool: "issue_refund", args: { invoice_id: "INV-24073", amount: 79 } },
        text: "Refund RF-1 issued",
        active_ms: 9000,
      }),
    ],
    final_state: [
      {
        table: "invoices",
        label: "Invoices",
        added: [],
        removed: [],
        changed: [{ key: "INV-24073", fields: [{ field: "refunded_cents", label: null, before: 0, after: 7900 }] }],
      },
    ],
    final_message: null,
    world_changed: false,
    others: [row({ episode_id: "ep-2", performer: "Hugo Brandt", status: "approved" })],
    ...partial,
  };
}

describe("Replay", () => {
  it("counts only kept steps for the state, and maps the navigation keys", () => {
    const steps = replay().steps;
    expect([0, 1, 2].map((i) => keptUpTo(steps, i))).toEqual([1, 1, 2]);
    expect(stepKey("j", 0, 3)).toBe(1);
    expect(stepKey("ArrowDown", 2, 3)).toBe(2);
    expect(stepKey("k", 0, 3)).toBe(0);
    expect(stepKey("End", 0, 3)).toBe(2);
    expect(stepKey("Home", 2, 3)).toBe(0);
    expect(stepKey("x", 1, 3)).toBeNull();
  });

  it("steps with the keyboard and the scrubber, showing each step and the records after it", async () => {
    api.openReplay.mockResolvedValue(replay());
    api.replayState.mockImplementation(async (_id: string, upto: number) => ({ upto, tables: [] }));
    render(<Replay episodeId="ep-1" onBack={vi.fn()} />);
    await screen.findByTestId("step-detail");
    expect(screen.getByTestId("step-detail").textContent).toContain("Find the account first");
    await waitFor(() => expect(api.replayState).toHaveBeenCalledWith("ep-1", 1));
    expect(screen.getByTestId("step-position").textContent).toBe("Step 1 of 3");

    fireEvent.keyDown(window, { key: "j" });
    expect(screen.getByTestId("step-position").textContent).toBe("Step 2 of 3");
    expect(screen.getByTestId("replay-state").textContent).toContain("This step was undone");
    fireEvent.keyDown(window, { key: "End" });
    expect(screen.getByTestId("step-detail").textContent).toContain("Issue refund");
    // The last step's state is the final one: no replay needed.
    expect(screen.getByTestId("replay-diff").textContent).toContain("INV-24073");
    expect(screen.getByTestId("replay-diff").textContent).toContain("79.00");
    expect(api.replayState).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(window, { key: "ArrowUp" });
    expect(screen.getByTestId("step-position").textContent).toBe("Step 2 of 3");
    fireEvent.keyDown(window, { key: "Home" });
    expect(screen.getByTestId("step-position").textContent).toBe("Step 1 of 3");

    fireEvent.change(screen.getByTestId("scrubber"), { target: { value: "2" } });
    expect(screen.getByTestId("step-position").textContent).toBe("Step 3 of 3");
    const current = screen.getAllByTestId("replay-step").map((b) => b.getAttribute("aria-current"));
    expect(current).toEqual([null, null, "step"]);
  });

  it("keeps the keys for typing in the decision dialog, and compares two runs step by step", async () => {
    const other = replay({
      episode: row({ episode_id: "ep-2", performer: "Hugo Brandt", status: "approved" }),
      steps: [step({ idx: 0 }), step({ idx: 1, action: { message: "Refunded." } })],
      final_state: [],
      others: [],
    });
    api.openReplay.mockImplementation(async (id: string) => (id === "ep-2" ? other : replay()));
    api.replayState.mockImplementation(async (_id: string, upto: number) => ({ upto, tables: [] }));
    render(<Replay episodeId="ep-1" onBack={vi.fn()} />);
    await screen.findByTestId("step-detail");
    fireEvent.click(screen.getByTestId("reject"));
    const comment = await screen.findByTestId("decision-comment");
    fireEvent.keyDown(comment, { key: "j" });
    expect(screen.getByTestId("step-position").textContent).toBe("Step 1 of 3");
    fireEvent.click(screen.getByText(/^Cancel/));

    fireEvent.change(screen.getByTestId("compare-select"), { target: { value: "ep-2" } });
    await screen.findByTestId("compare");
    const rows = screen.getAllByTestId("compare-row");
    expect(rows).toHaveLength(2);
    expect(rows[0]?.className).toBe("");
    expect(rows[1]?.className).toBe("compare-differs");
    expect(screen.getByTestId("compare-summary").textContent).toContain("1 of 2 steps differs.");
    expect(screen.getByTestId("compare-right-state").textContent).toContain("Nothing in the company's records had changed");
  });
});
