import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { createRef } from "react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { TurnView } from "../bindings/TurnView";
import { step, task } from "../test/fixtures";

const api = vi.hoisted(() => ({ episodeTranscript: vi.fn() }));
vi.mock("../api", () => ({ api, asAppError: (e: unknown) => e }));

import { Conversation, bubbles } from "./Conversation";

const AT = "2025-03-04T09:00:00.000Z";

const turns: TurnView[] = [
  {
    kind: "call",
    idx: 0,
    tool: "lookup_customer",
    args: { email: "dana.whitfield@harborlight.io" },
    rationale: null,
    result: "Harborlight Physio (C-1007)",
    retracted: false,
    wall_at: AT,
  },
  { kind: "say", idx: 1, message: "Could you confirm your ZIP?", rationale: null, reply: "Sure: 04101.", retracted: false, wall_at: AT },
  { kind: "say", idx: 2, message: "Wrong box, sorry.", rationale: null, reply: "", retracted: true, wall_at: AT },
  { kind: "say", idx: null, message: "Your refund is on its way.", rationale: null, reply: "", retracted: false, wall_at: null },
];

function conversation(steps = [step({ idx: 0 })], onSend = vi.fn(async () => true)) {
  return (
    <Conversation
      episodeId="ep-1"
      task={task}
      steps={steps}
      disabled={false}
      busy={false}
      onSend={onSend}
      composerRef={createRef()}
    />
  );
}

describe("Conversation", () => {
  beforeEach(() => {
    api.episodeTranscript.mockReset();
  });

  it("threads the opening message, then the transcript's messages and replies, tool calls left out", () => {
    expect(bubbles(task, turns).map((b) => [b.who, b.text, b.retracted ?? false, b.at ?? null])).toEqual([
      ["customer", "Hi, I was billed twice for March.", false, null],
      ["expert", "Could you confirm your ZIP?", false, AT],
      ["customer", "Sure: 04101.", false, AT],
      ["expert", "Wrong box, sorry.", true, AT],
      ["expert", "Your refund is on its way.", false, null],
    ]);
    expect(new Set(bubbles(task, turns).map((b) => b.key)).size).toBe(5);
  });

  it("shows the engine's transcript of the episode and fetches it again when a step is recorded or undone", async () => {
    api.episodeTranscript.mockResolvedValue(turns.slice(0, 2));
    const { rerender } = render(conversation());
    await waitFor(() => expect(screen.getByTestId("thread").textContent).toContain("Sure: 04101."));
    expect(api.episodeTranscript).toHaveBeenCalledWith("ep-1");
    expect(screen.getByTestId("thread").textContent).not.toContain("Harborlight Physio");

    api.episodeTranscript.mockResolvedValue(turns.slice(0, 3));
    rerender(conversation([step({ idx: 0 }), step({ idx: 1 }), step({ idx: 2 })]));
    await waitFor(() => expect(screen.getByText("Wrong box, sorry.")).toBeTruthy());
    expect(screen.getAllByText("Undone")).toHaveLength(1);

    rerender(conversation([step({ idx: 0 }), step({ idx: 1 }), step({ idx: 2, retracted: true })]));
    await waitFor(() => expect(api.episodeTranscript).toHaveBeenCalledTimes(3));
    rerender(conversation([step({ idx: 0 }), step({ idx: 1 }), step({ idx: 2, retracted: true })]));
    expect(api.episodeTranscript).toHaveBeenCalledTimes(3);
  });

  it("says so in plain words when the conversation cannot be loaded", async () => {
    api.episodeTranscript.mockRejectedValue({ code: "not_found", message: "That attempt is no longer saved." });
    render(conversation());
    await waitFor(() => expect(screen.getByRole("alert").textContent).toContain("That attempt is no longer saved."));
    expect(screen.getByTestId("thread").textContent).toContain("Hi, I was billed twice for March.");
  });

  it("sends with Ctrl+Enter and clears the draft once recorded", async () => {
    api.episodeTranscript.mockResolvedValue([]);
    const onSend = vi.fn(async () => true);
    render(conversation([], onSend));
    expect(screen.getByText(/Conversation/).textContent).toContain("Dana Whitfield");
    const box = screen.getByTestId("composer") as HTMLTextAreaElement;
    fireEvent.change(box, { target: { value: "Hello Dana" } });
    fireEvent.keyDown(box, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(onSend).toHaveBeenCalledWith("Hello Dana"));
    await waitFor(() => expect(box.value).toBe(""));
  });
});
