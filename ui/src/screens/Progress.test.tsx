import { render, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { ProgressView } from "../bindings/ProgressView";

vi.mock("chart.js", () => {
  class Chart {
    static register() {}
    destroy() {}
  }
  return { Chart, BarController: {}, BarElement: {}, CategoryScale: {}, LinearScale: {}, Tooltip: {}, Legend: {} };
});
const view: ProgressView = {
  me: "ben",
  progress: {
    experts: [
      { id: "ana", name: "Ana", in_progress: 1, done: 4, waiting: 1, returned: 1, approved: 2, tasks: 2, active_ms: 5_400_000, last_active: "2026-03-01T10:00:00Z" },
    ],
    reviewers: [
      { id: "ben", name: "Ben", reviewed: 0, approved: 0, returned: 0, pending: 1, last_review: null },
      { id: "cy", name: "Cy", reviewed: 3, approved: 2, returned: 1, pending: 1, last_review: "2026-03-01T11:00:00Z" },
      { id: "dee", name: "Dee", reviewed: 0, approved: 0, returned: 0, pending: 1, last_review: null },
    ],
    graders: [{ id: "ben", name: "Ben", assigned: 3, done: 1 }],
    waiting: 1,
  },
};
vi.mock("../api", () => ({ api: { peopleProgress: () => Promise.resolve(view) } }));

import { approvedShare, Progress, workTime } from "./Progress";

describe("progress", () => {
  it("shows each expert's recordings, reviewers who reviewed (and you), and graders", async () => {
    render(<Progress onHome={() => {}} />);
    const row = await screen.findByTestId("expert-row");
    expect(within(row).getByTestId("expert-done").textContent).toBe("4");
    expect(within(row).getByTestId("expert-approved").textContent).toBe("2");
    expect(within(row).getByTestId("expert-returned").textContent).toBe("1");
    expect(row.textContent).toContain("1 h 30 min");
    const reviewers = screen.getAllByTestId("reviewer-row").map((r) => r.getAttribute("data-reviewer"));
    expect(reviewers).toEqual(["ben", "cy"]);
    expect(screen.getAllByTestId("reviewer-row")[0]?.textContent).toContain("You");
    expect(screen.getByTestId("grader-row").textContent).toContain("2");
    expect(screen.getByTestId("chart-recordings")).toBeTruthy();
  });

  it("puts time and shares in words", () => {
    expect(workTime(0)).toBe("none yet");
    expect(workTime(20_000)).toBe("1 min");
    expect(workTime(720_000)).toBe("12 min");
    expect(workTime(7_500_000)).toBe("2 h 05 min");
    expect(approvedShare({ ...view.progress.experts[0]!, done: 0 })).toBeNull();
    expect(approvedShare(view.progress.experts[0]!)).toBe(0.5);
  });
});
