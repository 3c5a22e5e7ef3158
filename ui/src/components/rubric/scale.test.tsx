import { fireEvent, render, screen, within } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";

vi.mock("../../api", () => ({ api: {} }));

import type { SheetCriterion } from "../../bindings/SheetCriterion";
import { CriterionCard, levelMet } from "../../screens/GradeRun";
import { CriterionForm } from "./CriterionForm";
import { defaultScale, scaleOf, type Fields } from "./fields";

describe("the judged criterion's scale in the rubric editor", () => {
  function judged(c: Fields) {
    let current = c;
    const onChange = vi.fn((next: Fields) => (current = next));
    const view = render(<CriterionForm criterion={c} problems={[]} tools={[]} tables={[]} sections={[]} onChange={onChange} />);
    return { view, last: () => current, onChange };
  }

  it("starts as met or not met and offers a scale worth the criterion's points", () => {
    const { view, last } = judged({ id: "tone", kind: "judged", guidance: "Kind?", points: 2 });
    const q = within(view.container);
    expect(view.container.textContent).toContain("The grader says met or not met.");
    fireEvent.click(q.getByTestId("use-scale"));
    expect(last().scale).toEqual([
      { label: "Fully", points: 2 },
      { label: "Partly", points: 1 },
      { label: "Not at all", points: 0 },
    ]);
  });

  it("edits, adds and removes levels, and goes back to met or not met", () => {
    const c = { id: "tone", kind: "judged", points: 2, scale: defaultScale(2) };
    const { view, last } = judged(c);
    const q = within(view.container);
    expect(q.getAllByTestId("scale-level")).toHaveLength(3);
    fireEvent.change(q.getByLabelText("Level 2: words the grader picks"), { target: { value: "Clear but curt" } });
    expect(scaleOf(last())?.[1]).toEqual({ label: "Clear but curt", points: 1 });
    fireEvent.change(q.getByLabelText("Level 3: points"), { target: { value: "0.5" } });
    expect(scaleOf(last())?.[2]?.points).toBe(0.5);
    fireEvent.click(q.getByText("Add a level"));
    expect(scaleOf(last())).toHaveLength(4);
    fireEvent.click(q.getAllByText("Remove")[0]!);
    expect(scaleOf(last())?.map((l) => l.label)).toEqual(["Partly", "Not at all"]);
    fireEvent.click(q.getByTestId("no-scale"));
    expect(last().scale).toBeUndefined();
  });

  it("shows the engine's problem with the scale at the field", () => {
    render(
      <CriterionForm
        criterion={{ id: "tone", kind: "judged", points: 2, scale: [{ label: "Good", points: 1 }] }}
        problems={[{ criterion: 0, field: "scale", message: "A scale needs at least two levels" }]}
        tools={[]}
        tables={[]}
        sections={[]}
        onChange={vi.fn()}
      />,
    );
    const field = document.querySelector("[data-field=scale]") as HTMLElement;
    expect(within(field).getByRole("alert").textContent).toBe("A scale needs at least two levels");
  });
});

describe("grading on a scale", () => {
  const criterion: SheetCriterion = {
    id: "tone",
    description: "Kind and clear",
    guidance: "How clear and kind is the reply?",
    scale: [
      { label: "Clear and kind", points: 2 },
      { label: "Clear but curt", points: 1 },
      { label: "Unclear", points: 0 },
    ],
    kind: "judged",
    points: 2,
    gate: false,
    judged: true,
    automatic: null,
    evidence: { detail: "not graded yet" },
    error: null,
    grade: null,
  };

  function Card({ c, onSave }: { c: SheetCriterion; onSave: (e: unknown) => void }) {
    const [editing, setEditing] = useState<{ id: string; met: boolean | null; reason: string; level?: string | null } | null>({
      id: c.id,
      met: null,
      reason: "",
      level: null,
    });
    return (
      <CriterionCard
        c={c}
        editing={editing}
        onEdit={() => undefined}
        onChange={setEditing}
        onSave={() => onSave(editing)}
        onCancel={() => setEditing(null)}
        saving={false}
        focused
        onFocus={() => undefined}
      />
    );
  }

  it("picks a level instead of met or not met, and saves only with one and a reason", () => {
    const onSave = vi.fn();
    render(<Card c={criterion} onSave={onSave} />);
    expect(screen.queryByTestId("grade-met")).toBeNull();
    const levels = screen.getAllByTestId("grade-level");
    expect(levels.map((l) => l.dataset.level)).toEqual(["Clear and kind", "Clear but curt", "Unclear"]);
    const save = screen.getByTestId("save-grade") as HTMLButtonElement;
    fireEvent.change(screen.getByTestId("grade-reason"), { target: { value: "Curt but right" } });
    expect(save.disabled).toBe(true);
    fireEvent.click(levels[1]!);
    expect(levels[1]!.getAttribute("aria-checked")).toBe("true");
    expect(save.disabled).toBe(false);
    fireEvent.click(save);
    expect(onSave).toHaveBeenCalledWith({ id: "tone", met: true, reason: "Curt but right", level: "Clear but curt" });
    fireEvent.click(levels[2]!);
    fireEvent.click(save);
    expect(onSave).toHaveBeenLastCalledWith({ id: "tone", met: false, reason: "Curt but right", level: "Unclear" });
  });

  it("shows a given grade by its level", () => {
    const graded = { ...criterion, grade: { met: true, reason: "Fine", at: "2026-12-01T10:00:00Z", original: null, level: "Clear but curt" } };
    render(
      <CriterionCard c={graded} editing={null} onEdit={vi.fn()} onChange={vi.fn()} onSave={vi.fn()} onCancel={vi.fn()} saving={false} focused={false} onFocus={vi.fn()} />,
    );
    expect(screen.getByTestId("given").textContent).toContain("“Clear but curt”");
  });

  it("reads a level as met the way the engine does", () => {
    expect(levelMet(2, 1)).toBe(true);
    expect(levelMet(2, 0)).toBe(false);
    expect(levelMet(-2, -1)).toBe(true);
    expect(levelMet(-2, 0)).toBe(false);
  });
});
