import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { ExportChoices } from "../../bindings/ExportChoices";
import type { ExportProgressEvent } from "../../bindings/ExportProgressEvent";
import type { ExportRequest } from "../../bindings/ExportRequest";

type Listener = (e: { payload: ExportProgressEvent }) => void;
const { listeners, api, save } = vi.hoisted(() => ({
  listeners: [] as Listener[],
  api: { exportChoices: vi.fn(), exportCount: vi.fn(), exportDataset: vi.fn() },
  save: vi.fn(),
}));
vi.mock("../../api", () => ({ api }));
vi.mock("@tauri-apps/plugin-dialog", () => ({ save: (...a: unknown[]) => save(...a) }));
vi.mock("@tauri-apps/api/event", () => ({
  listen: (_: string, f: Listener) => {
    listeners.push(f);
    return Promise.resolve(() => listeners.splice(listeners.indexOf(f), 1));
  },
}));

import { ExportDialog, FIRST_FORM, requestOf, share } from "./ExportDialog";

const choices: ExportChoices = {
  formats: [
    { format: "trl", label: "Training conversations (Hugging Face / TRL)", description: "TRL rows", folder: false, suggested_name: "understudy-trl.jsonl" },
    { format: "folder", label: "Dataset folder", description: "A folder", folder: true, suggested_name: "understudy-dataset" },
    { format: "native", label: "Full backup (Understudy)", description: "Everything", folder: false, suggested_name: "understudy-episodes.jsonl" },
  ],
  worlds: [{ value: "support-desk", label: "Support desk" }],
  tasks: [{ world_id: "support-desk", task_id: "cancel-no-refund", title: "Cancel a plan" }],
  experts: [{ value: "ana-1", label: "Ana" }],
  statuses: [
    { value: "approved", label: "Approved (gold)" },
    { value: "submitted", label: "Waiting for review" },
  ],
  total: 3,
};

beforeEach(() => {
  listeners.length = 0;
  api.exportChoices.mockResolvedValue(choices);
  api.exportCount.mockImplementation((r: ExportRequest) => Promise.resolve(r.status === "approved" ? 1 : 3));
  api.exportDataset.mockReset();
  save.mockReset();
});

describe("the export request", () => {
  it("is gold only in TRL by default, and blank filters mean any", () => {
    expect(requestOf(FIRST_FORM)).toEqual({
      format: "trl",
      world: null,
      task: null,
      status: "approved",
      expert: null,
      since: null,
      until: null,
      include_retracted: false,
      rows_per_file: null,
    });
  });

  it("takes the task's own world, and never asks the backup to leave undone steps in", () => {
    const r = requestOf({ ...FIRST_FORM, format: "native", task: "support-desk/cancel-no-refund", includeUndone: true, since: "2026-01-01" });
    expect([r.world, r.task, r.include_retracted, r.since]).toEqual(["support-desk", "cancel-no-refund", false, "2026-01-01"]);
  });

  it("counts progress as a share, an empty export being complete", () => {
    expect(share(1, 4)).toBe(0.25);
    expect(share(0, 0)).toBe(1);
    expect(share(5, 4)).toBe(1);
  });
});

describe("the export dialog", () => {
  it("says how many recordings match, saves where the save dialog says, shows progress and the result", async () => {
    render(<ExportDialog onClose={() => {}} />);
    await waitFor(() => expect(screen.getByTestId("export-count").textContent).toBe("1 recording matches"));
    fireEvent.change(screen.getByTestId("export-status"), { target: { value: "" } });
    await waitFor(() => expect(screen.getByTestId("export-count").textContent).toBe("3 recordings match"));
    expect((screen.getByTestId("export-run") as HTMLButtonElement).disabled).toBe(true);

    save.mockResolvedValue("/home/ana/gold.jsonl");
    fireEvent.click(screen.getByTestId("export-choose"));
    await waitFor(() => expect((screen.getByTestId("export-destination") as HTMLInputElement).value).toBe("/home/ana/gold.jsonl"));
    expect(save.mock.calls[0]?.[0]).toMatchObject({ defaultPath: "understudy-trl.jsonl" });

    let finish: (v: unknown) => void = () => {};
    api.exportDataset.mockReturnValue(new Promise((r) => (finish = r)));
    fireEvent.click(screen.getByTestId("export-run"));
    await waitFor(() => expect(api.exportDataset).toHaveBeenCalled());
    const [request, output, job] = api.exportDataset.mock.calls[0] as [ExportRequest, string, string];
    expect([request.status, output]).toEqual([null, "/home/ana/gold.jsonl"]);
    act(() => {
      for (const l of listeners) l({ payload: { job: "someone-else", done: 9, total: 9 } });
      for (const l of listeners) l({ payload: { job, done: 1, total: 3 } });
    });
    const bar = screen.getByRole("progressbar");
    expect([bar.getAttribute("aria-valuenow"), bar.getAttribute("aria-valuemax")]).toEqual(["1", "3"]);
    expect(screen.getByTestId("export-progress").textContent).toContain("1 of 3 recordings");
    await act(async () => {
      finish({ path: "/home/ana/gold.jsonl", format: "trl", episodes: 3, steps: 21, files: ["/home/ana/gold.jsonl"], left_out: 0, warnings: ["world changed"] });
    });
    const done = screen.getByTestId("export-done");
    expect(done.textContent).toContain("Exported 3 recordings (21 steps) to /home/ana/gold.jsonl");
    expect(done.textContent).toContain("world changed");
    expect(screen.queryByTestId("export-progress")).toBeNull();
  });

  it("shows a refused export in plain words and keeps the form", async () => {
    render(<ExportDialog onClose={() => {}} />);
    await screen.findByTestId("export-format-folder");
    fireEvent.click(screen.getByTestId("export-format-folder"));
    expect(screen.getByTestId("export-destination").getAttribute("placeholder")).toContain("A new folder");
    fireEvent.change(screen.getByTestId("export-destination"), { target: { value: "relative/place" } });
    api.exportDataset.mockRejectedValue({ code: "invalid_input", message: '"relative/place" is not a full location.' });
    fireEvent.click(screen.getByTestId("export-run"));
    expect((await screen.findByRole("alert")).textContent).toContain("is not a full location");
    expect((screen.getByTestId("export-destination") as HTMLInputElement).value).toBe("relative/place");
    expect(screen.queryByTestId("export-done")).toBeNull();
  });
});
