import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { JudgeCriterionAgreement } from "../../bindings/JudgeCriterionAgreement";
import { agreedText, disagreementGroups, JudgeAgreementPanel, judgeName } from "./JudgeAgreement";

const criterion: JudgeCriterionAgreement = {
  id: "kind",
  description: "Declines kindly",
  judges: ["command:my-judge"],
  judged_runs: 2,
  graded_runs: 2,
  items: 4,
  agreed: 3,
  percent: 0.75,
  kappa: 0.5,
  note: null,
  disagreements: [{ episode_id: "r2", grader: "ana", judge_met: false, grader_met: true, judge_level: null, grader_level: null }],
};

describe("judge against people", () => {
  it("shows agreement with counts and κ per judged criterion", () => {
    render(<JudgeAgreementPanel judge={{ task_id: "t", criteria: [criterion] }} />);
    expect(screen.getByTestId("judge-agreed").textContent).toBe("Agreed on 3 of 4 grades (75%)");
    expect(screen.getByTestId("judge-kappa").textContent).toBe("0.50 (moderate)");
    expect(screen.getByTestId("judge-agreement").textContent).toContain("Judge: my-judge.");
    expect(screen.getByTestId("judge-row").textContent).toContain("They differ on 1 run.");
  });

  it("shows nothing without a judge, and says why when there is nothing to compare", () => {
    const none = { ...criterion, judged_runs: 0, items: 0, agreed: 0, percent: null, kappa: null, note: "No judge has graded these runs." };
    const { container } = render(<JudgeAgreementPanel judge={{ task_id: "t", criteria: [none] }} />);
    expect(container.innerHTML).toBe("");
    const waiting = { ...none, judged_runs: 1, note: "Nobody has graded a run the judge graded yet." };
    expect(agreedText(waiting)).toBe("Nobody has graded a run the judge graded yet.");
    render(<JudgeAgreementPanel judge={{ task_id: "t", criteria: [waiting] }} />);
    expect(screen.getByTestId("judge-kappa").textContent).toBe("—");
    expect(judgeName("command:llm")).toBe("llm");
    expect(judgeName("ana")).toBe("ana");
  });

  it("groups where the judge and people differ by what each said, most common first", () => {
    const d = (episode_id: string, judge_met: boolean, grader_met: boolean, judge_level: string | null = null, grader_level: string | null = null) => ({
      episode_id,
      grader: "ana",
      judge_met,
      grader_met,
      judge_level,
      grader_level,
    });
    const lenient = { ...criterion, disagreements: [d("r1", true, false), d("r2", false, true), d("r3", true, false)] };
    expect(disagreementGroups(lenient)).toEqual([
      { judge: "met", person: "not met", count: 2 },
      { judge: "not met", person: "met", count: 1 },
    ]);
    const scaled = { ...criterion, disagreements: [d("r1", true, true, "Clear but curt", "Clear and kind")] };
    expect(disagreementGroups(scaled)).toEqual([{ judge: "“Clear but curt”", person: "“Clear and kind”", count: 1 }]);
    render(<JudgeAgreementPanel judge={{ task_id: "t", criteria: [lenient] }} />);
    const rows = screen.getAllByTestId("judge-difference").map((li) => li.textContent);
    expect(rows).toEqual(["The judge said met, a person said not met2 grades", "The judge said not met, a person said met1 grade"]);
  });
});
