// The episode lifecycle as a state machine: what the expert can do depends
// on where the episode is (working, acting, paused, reviewing, submitted…),
// and the machine is the single place that decides it. Every transition that
// changes the episode calls the app, which records it durably first.
import { assign, fromPromise, setup } from "xstate";
import type { Api } from "../api";
import type { ActionInput } from "../bindings/ActionInput";
import type { AppError } from "../bindings/AppError";
import type { EpisodeView } from "../bindings/EpisodeView";
import type { ReviewView } from "../bindings/ReviewView";
import type { StepView } from "../bindings/StepView";

export interface EpisodeContext {
  api: Api;
  episodeId: string;
  view: EpisodeView | null;
  review: ReviewView | null;
  error: AppError | null;
  /** The most recent step the expert ran (shown under the tool form). */
  lastStep: StepView | null;
}

export type EpisodeEvent =
  | { type: "RUN"; action: ActionInput }
  | { type: "UNDO" }
  | { type: "PAUSE" }
  | { type: "RESUME" }
  | { type: "REVIEW" }
  | { type: "CANCEL" }
  | { type: "SUBMIT"; finalMessage: string | null }
  | { type: "DISCARD" }
  | { type: "RESTART" }
  | { type: "ANNOTATED"; idx: number; rationale: string | null; flag: string | null }
  | { type: "DISMISS_ERROR" }
  | { type: "RETRY" };

const withStep = (view: EpisodeView | null, step: StepView): EpisodeView | null =>
  view && {
    ...view,
    done: step.episode_done,
    active_ms: step.active_ms,
    steps: [...view.steps, step],
  };

export const episodeMachine = setup({
  types: {
    context: {} as EpisodeContext,
    events: {} as EpisodeEvent,
    input: {} as { api: Api; episodeId: string },
  },
  actors: {
    load: fromPromise<EpisodeView, { api: Api; id: string }>(({ input }) => input.api.openEpisode(input.id)),
    run: fromPromise<StepView, { api: Api; id: string; action: ActionInput }>(({ input }) =>
      input.api.runAction(input.id, input.action),
    ),
    undo: fromPromise<EpisodeView, { api: Api; id: string }>(({ input }) => input.api.undoAction(input.id)),
    pause: fromPromise<EpisodeView, { api: Api; id: string }>(({ input }) => input.api.pauseEpisode(input.id)),
    resume: fromPromise<EpisodeView, { api: Api; id: string }>(({ input }) => input.api.resumeEpisode(input.id)),
    review: fromPromise<ReviewView, { api: Api; id: string }>(({ input }) => input.api.reviewEpisode(input.id)),
    submit: fromPromise<EpisodeView, { api: Api; id: string; finalMessage: string | null }>(({ input }) =>
      input.api.submitEpisode(input.id, input.finalMessage),
    ),
    discard: fromPromise<null, { api: Api; id: string }>(({ input }) => input.api.discardEpisode(input.id)),
    restart: fromPromise<EpisodeView, { api: Api; id: string }>(({ input }) => input.api.restartEpisode(input.id)),
  },
  guards: {
    isPaused: ({ context }) => context.view?.status === "paused",
    isClosed: ({ context }) => !!context.view && !["in_progress", "paused"].includes(context.view.status),
    canAct: ({ context }) => !!context.view && !context.view.done,
    hasKeptStep: ({ context }) => !!context.view?.steps.some((s) => !s.retracted),
  },
  actions: {
    setView: assign({ view: (_, view: EpisodeView) => view, error: null }),
    setError: assign({ error: (_, error: AppError) => error }),
  },
}).createMachine({
  id: "episode",
  context: ({ input }) => ({
    api: input.api,
    episodeId: input.episodeId,
    view: null,
    review: null,
    error: null,
    lastStep: null,
  }),
  initial: "loading",
  on: {
    ANNOTATED: {
      actions: assign({
        view: ({ context, event }) =>
          context.view && {
            ...context.view,
            steps: context.view.steps.map((s) =>
              s.idx === event.idx ? { ...s, rationale: event.rationale, flag: event.flag } : s,
            ),
          },
      }),
    },
    DISMISS_ERROR: { actions: assign({ error: null }) },
  },
  states: {
    loading: {
      invoke: {
        src: "load",
        input: ({ context }) => ({ api: context.api, id: context.episodeId }),
        onDone: [
          {
            target: "closed",
            guard: ({ event }) => !["in_progress", "paused"].includes(event.output.status),
            actions: { type: "setView", params: ({ event }) => event.output },
          },
          {
            target: "paused",
            guard: ({ event }) => event.output.status === "paused",
            actions: { type: "setView", params: ({ event }) => event.output },
          },
          { target: "active", actions: { type: "setView", params: ({ event }) => event.output } },
        ],
        onError: { target: "failed", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
      },
    },
    active: {
      initial: "idle",
      states: {
        idle: {
          on: {
            RUN: { target: "acting", guard: "canAct" },
            UNDO: { target: "undoing", guard: "hasKeptStep" },
            PAUSE: { target: "#episode.pausing" },
            REVIEW: { target: "#episode.reviewing" },
            DISCARD: { target: "#episode.discarding" },
            RESTART: { target: "#episode.restarting" },
          },
        },
        acting: {
          invoke: {
            src: "run",
            input: ({ context, event }) => ({
              api: context.api,
              id: context.episodeId,
              action: (event as Extract<EpisodeEvent, { type: "RUN" }>).action,
            }),
            onDone: {
              target: "idle",
              actions: assign({
                view: ({ context, event }) => withStep(context.view, event.output),
                lastStep: ({ event }) => event.output,
                error: null,
              }),
            },
            onError: { target: "idle", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
          },
        },
        undoing: {
          invoke: {
            src: "undo",
            input: ({ context }) => ({ api: context.api, id: context.episodeId }),
            onDone: {
              target: "idle",
              actions: [{ type: "setView", params: ({ event }) => event.output }, assign({ lastStep: null })],
            },
            onError: { target: "idle", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
          },
        },
      },
    },
    pausing: {
      invoke: {
        src: "pause",
        input: ({ context }) => ({ api: context.api, id: context.episodeId }),
        onDone: { target: "paused", actions: { type: "setView", params: ({ event }) => event.output } },
        onError: { target: "active", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
      },
    },
    paused: {
      on: {
        RESUME: "resuming",
        REVIEW: "reviewing",
        DISCARD: "discarding",
        RESTART: "restarting",
      },
    },
    resuming: {
      invoke: {
        src: "resume",
        input: ({ context }) => ({ api: context.api, id: context.episodeId }),
        onDone: { target: "active", actions: { type: "setView", params: ({ event }) => event.output } },
        onError: { target: "paused", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
      },
    },
    reviewing: {
      invoke: {
        src: "review",
        input: ({ context }) => ({ api: context.api, id: context.episodeId }),
        onDone: { target: "confirming", actions: assign({ review: ({ event }) => event.output, error: null }) },
        onError: [
          { target: "paused", guard: "isPaused", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
          { target: "active", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
        ],
      },
    },
    confirming: {
      on: {
        CANCEL: [
          { target: "paused", guard: "isPaused", actions: assign({ review: null }) },
          { target: "active", actions: assign({ review: null }) },
        ],
        SUBMIT: "submitting",
      },
    },
    submitting: {
      invoke: {
        src: "submit",
        input: ({ context, event }) => ({
          api: context.api,
          id: context.episodeId,
          finalMessage: (event as Extract<EpisodeEvent, { type: "SUBMIT" }>).finalMessage,
        }),
        onDone: { target: "submitted", actions: { type: "setView", params: ({ event }) => event.output } },
        onError: { target: "confirming", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
      },
    },
    submitted: { type: "final" },
    discarding: {
      invoke: {
        src: "discard",
        input: ({ context }) => ({ api: context.api, id: context.episodeId }),
        onDone: { target: "discarded" },
        onError: [
          { target: "paused", guard: "isPaused", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
          { target: "active", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
        ],
      },
    },
    discarded: { type: "final" },
    restarting: {
      invoke: {
        src: "restart",
        input: ({ context }) => ({ api: context.api, id: context.episodeId }),
        onDone: {
          target: "active",
          actions: [
            { type: "setView", params: ({ event }) => event.output },
            assign({ episodeId: ({ event }) => event.output.id, lastStep: null, review: null }),
          ],
        },
        onError: [
          { target: "paused", guard: "isPaused", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
          { target: "active", actions: { type: "setError", params: ({ event }) => event.error as AppError } },
        ],
      },
    },
    closed: {},
    failed: { on: { RETRY: "loading" } },
  },
});
