import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

vi.mock("../api", () => ({ api: {} }));
vi.mock("@tauri-apps/plugin-dialog", () => ({ open: vi.fn() }));

import { scoreText } from "./GradeRun";
import { ImportResult } from "./Grading";

describe("importing agent runs", () => {
  it("lists a refused file's problems by line and says nothing was imported", () => {
    const onDismiss = vi.fn();
    render(
      <ImportResult
        result={{
          file: "/home/ana/runs.jsonl",
          stored: 0,
          steps: 0,
          problems: [
            { line: 3, message: "Not valid JSON: expected value at line 1 column 1" },
            { line: null, message: "This is not a text file." },
          ],
          warnings: [],
        }}
        onDismiss={onDismiss}
      />,
    );
    expect(screen.getByRole("alert").textContent).toContain("Nothing was imported. runs.jsonl has 2 problems");
    const items = screen.getAllByTestId("import-problem");
    expect(items.map((i) => i.textContent)).toEqual(["Line 3: Not valid JSON: expected value at line 1 column 1", "This is not a text file."]);
    fireEvent.click(screen.getByText("Dismiss"));
    expect(onDismiss).toHaveBeenCalled();
  });

  it("says how many runs were stored", () => {
    render(<ImportResult result={{ file: "runs.jsonl", stored: 2, steps: 17, problems: [], warnings: ["the world changed"] }} onDismiss={() => {}} />);
    expect(screen.getByTestId("import-done").textContent).toContain("Imported 2 agent runs (17 steps) from runs.jsonl.");
    expect(screen.getByTestId("import-done").textContent).toContain("the world changed");
  });
});

describe("scores in words", () => {
  it("shows a value, or the range a pending grade leaves", () => {
    expect(scoreText(0.857, [0.857, 0.857])).toBe("0.86");
    expect(scoreText(null, [0.9, 1])).toBe("waiting for a grade (between 0.90 and 1.00)");
  });
});
