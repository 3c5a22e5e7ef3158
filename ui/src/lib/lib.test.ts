import { renderHook, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { DRAFT_DELAY_MS, useDraftSaver } from "./drafts";
import { issueRefund, lookupCustomer } from "../test/fixtures";
import type { ObservationErrorCode } from "../bindings/ObservationErrorCode";
import { plainProblem, plainStepError } from "./errors";
import { argsSummary, duration, listingSummary, looksLikeJson } from "./format";
import { worldProgress } from "./progress";
import { prepareToolForm } from "./schema";
import { problems } from "./validator";

describe("plain errors", () => {
  it("turns engine codes into headlines a non-programmer understands", () => {
    const e = plainStepError({ code: "guard_failed", message: "You can't refund more than was paid." });
    expect(e.headline).toBe("The system refused this action");
    expect(e.explanation).toBe("You can't refund more than was paid.");
    expect(e.advice).toMatch(/Nothing was changed/);
  });

  it("words argument problems from their data, not from the engine's English", () => {
    const e = plainStepError({
      code: "invalid_arguments",
      message: "whatever the engine wrote for language models",
      problems: [
        { field: "reason", keyword: "required", expected: null },
        { field: "amount", keyword: "type", expected: "number" },
        { field: "customer_id", keyword: "pattern", expected: "^C-[0-9]+$" },
        { field: "priority", keyword: "enum", expected: ["normal", "high"] },
        { field: "amount", keyword: "exclusiveMinimum", expected: 0 },
        { field: "colour", keyword: "additionalProperties", expected: null },
      ],
    });
    expect(e.headline).toBe("Some details are missing or not in the expected form");
    expect(e.explanation).toBe(
      "Reason is required. Amount must be a number. Customer id is not in the expected form. " +
        "Priority must be one of: normal, high. Amount must be more than 0. Colour is not a detail this tool takes.",
    );
    expect(
      plainProblem({
        field: "",
        keyword: "anyOf",
        expected: [
          [{ field: "email", keyword: "required", expected: null }],
          [{ field: "customer_id", keyword: "required", expected: null }],
        ],
      }),
    ).toBe("Please fill in either Email or Customer id.");
    expect(plainProblem({ field: "filter.status", keyword: "format", expected: "date" })).toBe(
      "Filter status is not in the expected form.",
    );
  });

  it("shows the message itself when there are no problems as data", () => {
    const message = "invalid arguments for view_invoices: limit: expected a whole number from 1 to 500";
    expect(plainStepError({ code: "invalid_arguments", message }).explanation).toBe(message);
  });

  it("never shows a bare code", () => {
    expect(plainStepError({ code: "something_new" as ObservationErrorCode, message: "Broke." }).headline).toBe("This action did not work");
  });
});

describe("tool forms", () => {
  it("lifts 'one of these' rules out of anyOf and labels fields", () => {
    const f = prepareToolForm(lookupCustomer.parameters);
    expect(f.alternatives).toEqual([["email", "customer_id"]]);
    expect(f.schema.anyOf).toBeUndefined();
    const props = f.schema.properties as Record<string, { title?: string }>;
    expect(props.customer_id?.title).toBe("Customer id");
    expect(f.uiSchema.customer_id).toBeUndefined();
    expect(f.uiSchema["ui:order"]).toEqual(["*"]);
  });

  it("uses a text area for long answers", () => {
    const f = prepareToolForm(issueRefund.parameters);
    expect((f.uiSchema.reason as Record<string, unknown>)["ui:widget"]).toBe("textarea");
  });

  it("validates what a person can fix before running", () => {
    const f = prepareToolForm(issueRefund.parameters);
    const found = problems(f.schema, { invoice_id: "24073", amount: 0, reason: "dup" });
    expect(found).toContainEqual(["ticket_id", "Please fill this in."]);
    expect(found).toContainEqual(["invoice_id", "Invoice id should look like INV-24073."]);
    expect(found).toContainEqual(["amount", "Must be more than 0."]);
    expect(found).toContainEqual(["reason", "Please write at least 5 characters."]);
    const lookup = prepareToolForm(lookupCustomer.parameters);
    expect(problems(lookup.schema, {}, lookup.alternatives)).toEqual([["", "Please fill in either Email or Customer id."]]);
    expect(problems(lookup.schema, { email: "a@b.c" }, lookup.alternatives)).toEqual([]);
  });
});

describe("formatting", () => {
  it("formats durations, arguments and detects JSON", () => {
    expect(duration(65_000)).toBe("1:05");
    expect(duration(3_725_000)).toBe("1 h 02 min");
    expect(argsSummary({ invoice_id: "INV-1", amount: 79, note: "" })).toBe("Invoice id: INV-1 · Amount: 79");
    expect(looksLikeJson('{"a": 1}')).toBe(true);
    expect(looksLikeJson("Refund RF-1 issued")).toBe(false);
  });
});

describe("worldProgress", () => {
  const t = (id: string, submitted: number) => ({
    id,
    title: id,
    difficulty: null,
    summary: "",
    progress: { submitted, open_episode: null },
  });
  const world = { id: "w", name: "W", version: "1", description: "", tasks: [t("a", 1), t("b", 0), t("c", 1), t("d", 0)] };

  it("counts done tasks and picks the next undone one after the current, wrapping", () => {
    expect(worldProgress(world, "c")).toEqual({ done: 2, total: 4, next: world.tasks[3] });
    expect(worldProgress(world, "d").next).toBe(world.tasks[1]);
  });

  it("has no next task when everything else is done", () => {
    const all = { ...world, tasks: [t("a", 1), t("b", 2)] };
    expect(worldProgress(all, "a")).toEqual({ done: 2, total: 2, next: null });
  });
});

describe("listingSummary", () => {
  it("reads a record-list look-up as a sentence, not JSON", () => {
    expect(listingSummary({ filter: { customer_id: "C-1012" }, sort: "due_date", descending: true, limit: 50 })).toBe(
      "Customer id equals C-1012 · sorted by due date, last first",
    );
    expect(listingSummary({ search: " Harborlight ", sort: "amount", descending: false, offset: 50 })).toBe(
      "containing “Harborlight” · sorted by amount · from row 51",
    );
    expect(listingSummary({ limit: 50, descending: false })).toBe("");
  });
});

describe("useDraftSaver", () => {
  it("saves a slot once typing pauses, the last text only, and at once when asked", async () => {
    vi.useFakeTimers();
    const save = vi.fn(async () => undefined);
    const { result, unmount } = renderHook(() => useDraftSaver(save, vi.fn()));
    result.current("message", "H");
    result.current("message", "Hi");
    result.current("tool:issue_refund", '{"amount":79}');
    expect(save).not.toHaveBeenCalled();
    vi.advanceTimersByTime(DRAFT_DELAY_MS);
    expect(save.mock.calls).toEqual([
      ["message", "Hi"],
      ["tool:issue_refund", '{"amount":79}'],
    ]);
    result.current("message", "", true);
    expect(save).toHaveBeenLastCalledWith("message", "");
    // Typing still waiting when the screen closes is saved, not dropped.
    result.current("message", "Half a thought");
    unmount();
    expect(save).toHaveBeenLastCalledWith("message", "Half a thought");
    vi.useRealTimers();
  });

  it("reports a failed save", async () => {
    const onError = vi.fn();
    const { result } = renderHook(() => useDraftSaver(async () => Promise.reject({ code: "io", message: "disk full" }), onError));
    result.current("message", "x", true);
    await waitFor(() => expect(onError).toHaveBeenCalledWith({ code: "io", message: "disk full" }));
  });
});
