import { describe, expect, it, vi } from "vitest";
import { createActor, waitFor } from "xstate";
import type { Api } from "../api";
import { CLOSED, PAUSED, episode, step, taken, transitions } from "../test/fixtures";
import { episodeMachine } from "./episode";

function fakeApi(overrides: Partial<Api> = {}): Api {
  const view = episode();
  return {
    openEpisode: vi.fn(async () => view),
    runAction: vi.fn(async () => taken({ idx: 0 })),
    undoAction: vi.fn(async () =>
      episode({ steps: [step({ idx: 0, retracted: true })], transitions: transitions({ can_redo: true }) }),
    ),
    redoAction: vi.fn(async () => episode({ steps: [step({ idx: 0 })], transitions: transitions({ can_undo: true }) })),
    pauseEpisode: vi.fn(async () => episode({ status: "paused", transitions: PAUSED })),
    resumeEpisode: vi.fn(async () => episode()),
    reviewEpisode: vi.fn(async () => ({
      tables: [],
      final_message: null,
      steps_kept: 1,
      steps_undone: 0,
      messages_sent: 0,
      active_ms: 1000,
      done: false,
    })),
    submitEpisode: vi.fn(async () => episode({ status: "submitted", transitions: CLOSED })),
    discardEpisode: vi.fn(async () => null),
    restartEpisode: vi.fn(async () => episode({ id: "ep-2" })),
    ...overrides,
  } as unknown as Api;
}

const start = async (api: Api) => {
  const actor = createActor(episodeMachine, { input: { api, episodeId: "ep-1" } }).start();
  await waitFor(actor, (s) => !s.matches("loading"));
  return actor;
};

describe("episode lifecycle", () => {
  it("runs an action and appends the recorded step", async () => {
    const api = fakeApi();
    const actor = await start(api);
    expect(actor.getSnapshot().matches({ active: "idle" })).toBe(true);
    actor.send({ type: "RUN", action: { tool: "lookup_customer", args: { email: "x@y.z" } } });
    expect(actor.getSnapshot().matches({ active: "acting" })).toBe(true);
    const s = await waitFor(actor, (s) => s.matches({ active: "idle" }));
    expect(s.context.view?.steps).toHaveLength(1);
    expect(s.context.lastStep?.idx).toBe(0);
    expect(api.runAction).toHaveBeenCalledWith("ep-1", { tool: "lookup_customer", args: { email: "x@y.z" } }, null);
    expect(s.context.view?.transitions.can_undo).toBe(true);
  });

  it("refuses to act while paused, and resumes", async () => {
    const api = fakeApi();
    const actor = await start(api);
    actor.send({ type: "PAUSE" });
    await waitFor(actor, (s) => s.matches("paused"));
    actor.send({ type: "RUN", action: { message: "hi" } });
    expect(api.runAction).not.toHaveBeenCalled();
    actor.send({ type: "RESUME" });
    await waitFor(actor, (s) => s.matches("active"));
  });

  it("keeps the error and stays usable when a command fails", async () => {
    const api = fakeApi({
      runAction: vi.fn(async () => {
        throw { code: "database", message: "Your work could not be saved." };
      }),
    });
    const actor = await start(api);
    actor.send({ type: "RUN", action: { message: "hi" } });
    const s = await waitFor(actor, (s) => s.matches({ active: "idle" }));
    expect(s.context.error?.code).toBe("database");
    expect(s.context.view?.steps).toHaveLength(0);
    actor.send({ type: "DISMISS_ERROR" });
    expect(actor.getSnapshot().context.error).toBeNull();
  });

  it("only undoes when the recorder allows it", async () => {
    const api = fakeApi();
    const actor = await start(api);
    actor.send({ type: "UNDO" });
    expect(api.undoAction).not.toHaveBeenCalled();
    actor.send({ type: "RUN", action: { message: "hi" } });
    await waitFor(actor, (s) => s.matches({ active: "idle" }));
    actor.send({ type: "UNDO" });
    const s = await waitFor(actor, (s) => s.matches({ active: "idle" }) && !!s.context.view?.steps[0]?.retracted);
    expect(api.undoAction).toHaveBeenCalledOnce();
    expect(s.context.lastStep).toBeNull();
  });

  it("redoes only what the recorder says can be redone", async () => {
    const api = fakeApi();
    const actor = await start(api);
    actor.send({ type: "REDO" });
    expect(api.redoAction).not.toHaveBeenCalled();
    actor.send({ type: "RUN", action: { message: "hi" } });
    await waitFor(actor, (s) => s.matches({ active: "idle" }));
    actor.send({ type: "UNDO" });
    await waitFor(actor, (s) => s.matches({ active: "idle" }) && !!s.context.view?.transitions.can_redo);
    actor.send({ type: "REDO" });
    const s = await waitFor(actor, (s) => s.matches({ active: "idle" }) && !s.context.view?.steps[0]?.retracted);
    expect(api.redoAction).toHaveBeenCalledOnce();
    expect(s.context.view?.transitions.can_redo).toBe(false);
  });

  it("reviews, can go back, then submits", async () => {
    const api = fakeApi();
    const actor = await start(api);
    actor.send({ type: "REVIEW" });
    await waitFor(actor, (s) => s.matches("confirming"));
    actor.send({ type: "CANCEL" });
    expect(actor.getSnapshot().matches("active")).toBe(true);
    actor.send({ type: "REVIEW" });
    await waitFor(actor, (s) => s.matches("confirming"));
    actor.send({ type: "SUBMIT", finalMessage: null });
    const s = await waitFor(actor, (s) => s.matches("submitted"));
    expect(s.context.view?.status).toBe("submitted");
  });

  it("opens a paused episode paused, and a submitted one closed", async () => {
    const paused = await start(fakeApi({ openEpisode: vi.fn(async () => episode({ status: "paused", transitions: PAUSED })) }));
    expect(paused.getSnapshot().matches("paused")).toBe(true);
    const closed = await start(fakeApi({ openEpisode: vi.fn(async () => episode({ status: "submitted", transitions: CLOSED })) }));
    expect(closed.getSnapshot().matches("closed")).toBe(true);
  });

  it("follows the recorder's transitions, not its own idea of them", async () => {
    // The task has ended: no more steps, but undo (which reopens it) and review.
    const ended = episode({ done: true, steps: [step({ idx: 0 })], transitions: transitions({ can_step: false, can_undo: true }) });
    const api = fakeApi({ openEpisode: vi.fn(async () => ended) });
    const actor = await start(api);
    actor.send({ type: "RUN", action: { message: "one more" } });
    expect(api.runAction).not.toHaveBeenCalled();
    actor.send({ type: "UNDO" });
    await waitFor(actor, (s) => s.matches({ active: "idle" }) && !!s.context.view?.steps[0]?.retracted);
    expect(api.undoAction).toHaveBeenCalledOnce();

    // A step that ends the task takes the recorder's new answer with it.
    const api2 = fakeApi({ runAction: vi.fn(async () => ({ ...taken({ idx: 0, terminated: true }), done: true, transitions: transitions({ can_step: false, can_undo: true }) })) });
    const a2 = await start(api2);
    a2.send({ type: "RUN", action: { tool: "close_ticket", args: {} } });
    const s = await waitFor(a2, (s) => s.matches({ active: "idle" }) && s.context.view?.steps.length === 1);
    expect(s.context.view?.done).toBe(true);
    a2.send({ type: "RUN", action: { message: "hello?" } });
    expect(api2.runAction).toHaveBeenCalledOnce();
  });

  it("starting over switches to the new episode", async () => {
    const actor = await start(fakeApi());
    actor.send({ type: "RESTART" });
    const s = await waitFor(actor, (s) => s.matches("active") && s.context.episodeId === "ep-2");
    expect(s.context.view?.id).toBe("ep-2");
  });
});
