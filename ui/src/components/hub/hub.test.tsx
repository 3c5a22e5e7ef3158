import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { HubView } from "../../bindings/HubView";
import { assignmentNote, waitingText } from "../../lib/hub";
import { Assignments } from "./Assignments";
import { HubCard } from "./HubCard";
import { HubScreenNote, HubWorkNote, screenWorkText, workText } from "./HubWork";

const signedIn: HubView = {
  account: { url: "http://hub.example:8600", login: "ada", name: "Ada Lovelace", role: "expert" },
  waiting: 3,
  last_synced_at: null,
  last_error: null,
  syncing: false,
  assignments: [],
  work: [],
};

describe("the hub card", () => {
  it("offers to sign in when no hub is configured", () => {
    const onSignIn = vi.fn();
    render(<HubCard view={{ ...signedIn, account: null }} busy={false} onSignIn={onSignIn} onSync={vi.fn()} onSignOut={vi.fn()} />);
    expect(screen.getByText(/Your recordings stay on this computer/)).toBeTruthy();
    fireEvent.click(screen.getByTestId("hub-open-sign-in"));
    expect(onSignIn).toHaveBeenCalled();
  });

  it("says who is signed in, what waits, and why the last send failed", () => {
    const onSync = vi.fn();
    render(
      <HubCard
        view={{ ...signedIn, last_error: "The team hub at http://hub.example:8600 cannot be reached right now." }}
        busy={false}
        onSignIn={vi.fn()}
        onSync={onSync}
        onSignOut={vi.fn()}
      />,
    );
    expect(screen.getByTestId("hub-who").textContent).toContain("Ada Lovelace (Expert)");
    expect(screen.getByTestId("hub-waiting").textContent).toBe("3 recordings waiting to be sent");
    expect(screen.getByTestId("hub-last-sent").textContent).toBe("Nothing sent yet");
    expect(screen.getByTestId("hub-error").textContent).toContain("cannot be reached");
    fireEvent.click(screen.getByTestId("hub-sync"));
    expect(onSync).toHaveBeenCalled();
  });

  it("words the waiting count", () => {
    expect(waitingText({ ...signedIn, waiting: 0 })).toBe("Everything is sent");
    expect(waitingText({ ...signedIn, waiting: 1 })).toBe("1 recording waiting to be sent");
    expect(waitingText({ ...signedIn, syncing: true })).toBe("Sending…");
    const decision = { key: "review:e1", state: "waiting", message: null };
    expect(waitingText({ ...signedIn, waiting: 0, work: [decision] })).toBe("1 decision or grade waiting to be sent");
    expect(waitingText({ ...signedIn, waiting: 2, work: [decision, { ...decision, key: "grades:e2" }] })).toBe(
      "2 recordings and 2 decisions or grades waiting to be sent",
    );
    expect(waitingText({ ...signedIn, waiting: 0, work: [{ ...decision, state: "sent" }] })).toBe("Everything is sent");
  });
});

describe("work done in the screens", () => {
  const reviewer: HubView = {
    ...signedIn,
    account: { url: "http://hub.example:8600", login: "rita", name: "Rita Reviewer", role: "reviewer" },
    work: [
      { key: "review:e1", state: "waiting", message: null },
      { key: "review:e2", state: "sent", message: null },
      { key: "review:e3", state: "refused", message: "Not sent: the hub already has a decision on this recording. The hub's decision replaces yours on this computer." },
    ],
  };

  it("says where each piece of work is", () => {
    const { rerender } = render(<HubWorkNote view={reviewer} workKey="review:e1" />);
    expect(screen.getByTestId("hub-work").textContent).toBe("Saved here, will be sent to the hub");
    rerender(<HubWorkNote view={reviewer} workKey="review:e2" />);
    expect(screen.getByTestId("hub-work").textContent).toBe("Sent to the hub");
    expect(screen.getByTestId("hub-work").dataset.state).toBe("sent");
    rerender(<HubWorkNote view={reviewer} workKey="review:e3" />);
    expect(screen.getByTestId("hub-work").textContent).toContain("already has a decision");
    expect(workText({ key: "k", state: "refused", message: null })).toContain("stays on this computer");
  });

  it("shows nothing without a hub, or for work never queued", () => {
    const { container, rerender } = render(<HubWorkNote view={{ ...reviewer, account: null }} workKey="review:e1" />);
    expect(container.textContent).toBe("");
    rerender(<HubWorkNote view={reviewer} workKey="review:other" />);
    expect(container.textContent).toBe("");
    rerender(<HubScreenNote view={null} what="Your decisions" prefix="review:" />);
    expect(container.textContent).toBe("");
    rerender(<HubScreenNote view={reviewer} what="Your grades" prefix="grades:" />);
    expect(container.textContent).toBe("Your grades go to the team hub as Rita Reviewer, and are saved on this computer first.");
    rerender(<HubScreenNote view={reviewer} what="Your decisions" prefix="review:" />);
    expect(screen.getByTestId("hub-screen-work").textContent).toBe("1 saved here, will be sent to the hub.");
    expect(screenWorkText({ ...reviewer, work: [{ key: "review:e2", state: "sent", message: null }] }, "review:")).toBe(
      "Everything is sent to the hub.",
    );
  });
});

describe("the assignments", () => {
  const catalog = {
    worlds_dir: "/w",
    problems: [],
    worlds: [
      {
        id: "mini",
        name: "Mini bank",
        version: "1",
        description: "",
        tasks: [{ id: "pay-back", title: "Pay Charles back", difficulty: null, summary: "", progress: { submitted: 0, open_episode: null } }],
      },
    ],
  };

  it("starts an assigned task that is on this computer, and explains one that is not", () => {
    const onStart = vi.fn();
    render(
      <Assignments
        assignments={[
          { id: 1, world_id: "mini", task_id: "pay-back", due_at: "2026-03-04T16:00:00Z", overlap: 2, here: "ready" },
          { id: 2, world_id: "other", task_id: "x", due_at: null, overlap: 1, here: "missing" },
        ]}
        catalog={catalog}
        disabled={false}
        starting={null}
        onStart={onStart}
      />,
    );
    expect(screen.getByText("Pay Charles back")).toBeTruthy();
    expect(screen.getByText(/also given to 1 other expert/)).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Start assignment: Pay Charles back" }));
    expect(onStart).toHaveBeenCalledWith("mini", catalog.worlds[0]?.tasks[0]);
    const missing = screen.getByRole("button", { name: "Start assignment: x" }) as HTMLButtonElement;
    expect(missing.disabled).toBe(true);
    expect(screen.getByText(/is not on this computer/)).toBeTruthy();
    expect(assignmentNote("other_version", "mini")).toContain("different version");
  });
});
