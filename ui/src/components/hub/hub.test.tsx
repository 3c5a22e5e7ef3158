import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { HubView } from "../../bindings/HubView";
import { assignmentNote, waitingText } from "../../lib/hub";
import { Assignments } from "./Assignments";
import { HubCard } from "./HubCard";

const signedIn: HubView = {
  account: { url: "http://hub.example:8600", login: "ada", name: "Ada Lovelace", role: "expert" },
  waiting: 3,
  last_synced_at: null,
  last_error: null,
  syncing: false,
  assignments: [],
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
