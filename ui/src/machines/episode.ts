// The episode lifecycle as a state machine: which screen state the
// workspace is in (working, acting, paused, reviewing, submitted…). Whether
// a change is allowed at all is the engine's recorder's decision, sent with
// every view as `transitions`; the guards only read it. Every transition
// that changes the episode calls the app, which records it durably first.
import { assign, fromPromise, setup } from "xstate";
import type { Api } from "../api";
import type { Action } from "../bindings/Action";
import type { AppError } from "../bindings/AppError";
import type { EpisodeView } from "../bindings/EpisodeView";
import type { ReviewView } from "../bindings/ReviewView";
import type { StepTaken } from "../bindings/StepTaken";
import type { StepView } from "../bindings/StepView";
import type { Transitions } from "../bindings/Transitions";

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
  | { type: "RUN"; action: Action }
  | { type: "UNDO" }
  | { type: "REDO" }
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

const withStep = (view: EpisodeView | null, taken: StepTaken): EpisodeView | null =>
  view && {
    ...view,
    done: taken.done,
    transitions: taken.transitions,
    active_ms: taken.step.active_ms,
    steps: [...view.steps, taken.step],
  };

/** The recorder's answer for the episode on screen (nothing before it loads). */
const allowed = (view: EpisodeView | null, what: keyof Transitions) => !!view?.transitions[what];

/** Neither running nor paused: nothing more can change it. */
const isClosed = (view: EpisodeView) => !view.transitions.can_submit;

export const episodeMachine = setup({
  types: {
    context: {} as EpisodeContext,
    events: {} as EpisodeEvent,
    input: {} as { api: Api; episodeId: string },
  },
  actors: {
    load: fromPromise<EpisodeView, { api: Api; id: string }>(({ input }) => input.api.openEpisode(input.id)),
    run: fromPromise<StepTaken, { api: Api; id: string; action: Action }>(({ input }) =>
      input.api.runAction(input.id, input.action, null),
    ),
    undo: fromPromise<EpisodeView, { api: Api; id: string }>(({ input }) => input.api.undoAction(input.id)),
    redo: fromPromise<EpisodeView, { api: Api; id: string }>(({ input }) => input.api.redoAction(input.id)),
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
    isPaused: ({ context }) => allowed(context.view, "can_resume"),
    canStep: ({ context }) => allowed(context.view, "can_step"),
    canUndo: ({ context }) => allowed(context.view, "can_undo"),
    canRedo: ({ context }) => allowed(context.view, "can_redo"),
    canPause: ({ context }) => allowed(context.view, "can_pause"),
    canResume: ({ context }) => allowed(context.view, "can_resume"),
    canSubmit: ({ context }) => allowed(context.view, "can_submit"),
    canAbandon: ({ context }) => allowed(context.view, "can_abandon"),
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
            guard: ({ event }) => isClosed(event.output),
            actions: { type: "setView", params: ({ event }) => event.output },
          },
          {
            target: "paused",
            guard: ({ event }) => event.output.transitions.can_resume,
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
            RUN: { target: "acting", guard: "canStep" },
            UNDO: { target: "undoing", guard: "canUndo" },
            REDO: { target: "redoing", guard: "canRedo" },
            PAUSE: { target: "#episode.pausing", guard: "canPause" },
            REVIEW: { target: "#episode.reviewing", guard: "canSubmit" },
            DISCARD: { target: "#episode.discarding", guard: "canAbandon" },
            RESTART: { target: "#episode.restarting", guard: "canAbandon" },
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
                lastStep: ({ event }) => event.output.step,
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
        redoing: {
          invoke: {
            src: "redo",
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
        RESUME: { target: "resuming", guard: "canResume" },
        REVIEW: { target: "reviewing", guard: "canSubmit" },
        DISCARD: { target: "discarding", guard: "canAbandon" },
        RESTART: { target: "restarting", guard: "canAbandon" },
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
