import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { task } from "../test/fixtures";

const api = vi.hoisted(() => ({
  home: vi.fn(),
  saveExpert: vi.fn(),
  startEpisode: vi.fn(),
  discardEpisode: vi.fn(),
  selectExpert: vi.fn(),
  hubStatus: vi.fn(),
  hubSync: vi.fn(),
  hubSignOut: vi.fn(),
}));
vi.mock("../api", () => ({ api }));

import { Home } from "./Home";

const summary = { id: task.id, title: task.title, difficulty: task.difficulty, summary: task.instruction };

const expert = {
  id: "e1",
  name: "Renee Okafor",
  domain: "Customer support",
  credentials: "8 years leading billing support",
  credentials_attested: true,
  verified: false,
  current: true,
};

const catalog = {
  worlds_dir: "/w",
  problems: [],
  worlds: [
    {
      id: "support-desk",
      name: "Brightline Support Desk",
      version: "1.0.0",
      description: "A SaaS support desk.",
      tasks: [
        { ...summary, progress: { submitted: 1, open_episode: null } },
        { ...summary, id: "t2", title: "Upgrade a plan", progress: { submitted: 0, open_episode: "ep-9" } },
        { ...summary, id: "t3", title: "Cancel a plan", progress: { submitted: 0, open_episode: null } },
      ],
    },
  ],
};

function homeWith(current: typeof expert | null) {
  return {
    version: "0.1.0",
    startup_error: null,
    store_path: "/d/understudy.sqlite",
    expert: current,
    experts: current ? [current] : [],
    catalog,
    open_episodes: [],
  };
}

beforeEach(() => {
  api.home.mockReset();
  api.hubStatus.mockResolvedValue({
    account: null,
    waiting: 0,
    last_synced_at: null,
    last_error: null,
    syncing: false,
    assignments: [],
  });
});

describe("Home", () => {
  it("asks a new expert for their profile before any task can start", async () => {
    api.home.mockResolvedValueOnce(homeWith(null)).mockResolvedValue(homeWith(expert));
    api.saveExpert.mockResolvedValue(expert);
    render(<Home onOpen={vi.fn()} />);
    await screen.findByTestId("expert-form");
    await screen.findByText("Refund a duplicate March charge");
    const starts = screen.getAllByRole("button", { name: /^(Start|Resume|Do again)/ });
    expect(starts.every((b) => (b as HTMLButtonElement).disabled)).toBe(true);
    fireEvent.change(screen.getByPlaceholderText(/Renee Okafor/), { target: { value: "Renee Okafor" } });
    fireEvent.click(screen.getByText("Save profile"));
    await waitFor(() => expect(api.saveExpert).toHaveBeenCalledWith(null, expect.objectContaining({ name: "Renee Okafor" })));
    await screen.findByTestId("expert-profile");
  });

  it("shows progress per task and resumes an open episode", async () => {
    api.home.mockResolvedValue(homeWith(expert));
    const onOpen = vi.fn();
    render(<Home onOpen={onOpen} />);
    await screen.findByTestId("expert-profile");
    await screen.findByText("Upgrade a plan");
    expect(screen.getByText("Done")).toBeTruthy();
    expect(screen.getByText("In progress")).toBeTruthy();
    expect(screen.getByText("Not started")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Resume: Upgrade a plan" }));
    expect(onOpen).toHaveBeenCalledWith("ep-9");
    expect(api.startEpisode).not.toHaveBeenCalled();
  });
  it("shows a returned attempt with the reviewer's comment, offers another try, and opens the review queue", async () => {
    const returned = { episode_id: "ep-1", reviewer: "Lee Park", comment: "Verify the account first", at: "2025-03-04T10:00:00Z" };
    const view = homeWith(expert);
    const world = view.catalog.worlds[0]!;
    const withReturned = {
      ...view,
      catalog: {
        ...view.catalog,
        worlds: [{ ...world, tasks: [{ ...world.tasks[0]!, progress: { submitted: 1, open_episode: null, returned } }] }],
      },
    };
    api.home.mockResolvedValue(withReturned);
    const onReview = vi.fn();
    render(<Home onOpen={vi.fn()} onReview={onReview} />);
    const line = await screen.findByTestId("returned");
    expect(line.textContent).toBe("Returned by Lee Park: “Verify the account first”");
    expect(screen.getByText("Returned")).toBeTruthy();
    expect(screen.getByRole("button", { name: /^Start: / }).textContent).toBe("Try again");
    fireEvent.click(screen.getByTestId("open-review"));
    expect(onReview).toHaveBeenCalled();
  });
});
