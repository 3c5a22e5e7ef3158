import { ask } from "@tauri-apps/plugin-dialog";
import { useMachine } from "@xstate/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { waitFor } from "xstate";
import { api, asAppError } from "../api";
import type { Action } from "../bindings/Action";
import type { AppError } from "../bindings/AppError";
import type { Draft } from "../bindings/Draft";
import type { ToolInfo } from "../bindings/ToolInfo";
import type { WorldDetail } from "../bindings/WorldDetail";
import { Brief } from "../components/Brief";
import { Conversation } from "../components/Conversation";
import { ErrorBanner } from "../components/ErrorBanner";
import { Kbd, ShortcutKeys } from "../components/Kbd";
import { Modal } from "../components/Modal";
import { PolicyPanel } from "../components/PolicyPanel";
import { PAGE_SIZE, Records, viewState } from "../components/Records";
import { ReviewDialog } from "../components/ReviewDialog";
import { ShortcutsHelp } from "../components/ShortcutsHelp";
import { Timeline } from "../components/Timeline";
import { ToolForm } from "../components/ToolForm";
import { kindLabel, ToolPalette } from "../components/ToolPalette";
import { moveBetweenTabs } from "../lib/tabs";
import { duration, isMessage, plural } from "../lib/format";
import { MESSAGE_SLOT, toolSlot, useDraftSaver } from "../lib/drafts";
import { worldProgress, type WorldProgress } from "../lib/progress";
import { useShortcuts } from "../lib/shortcuts";
import { episodeMachine } from "../machines/episode";

type Data = Record<string, unknown>;

declare global {
  interface Window {
    /** Timings for the performance report: click Run → result shown. */
    __understudyPerf?: { runs: number[] };
  }
}

function ActiveTimer({ ms, running }: { ms: number; running: boolean }) {
  const [base, setBase] = useState({ ms, at: Date.now() });
  const [, tick] = useState(0);
  useEffect(() => setBase({ ms, at: Date.now() }), [ms, running]);
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [running]);
  const now = base.ms + (running ? Date.now() - base.at : 0);
  return (
    <span className="timer" title="Time worked on this task, pauses excluded">
      {duration(now)}
    </span>
  );
}

export function Workspace({
  episodeId,
  onHome,
  onOpen,
}: {
  episodeId: string;
  onHome: () => void;
  /** Opens another episode (the next task after a submit). */
  onOpen: (episodeId: string) => void;
}) {
  const [state, send, actor] = useMachine(episodeMachine, { input: { api, episodeId } });
  const { view, error, review, lastStep } = state.context;
  const [world, setWorld] = useState<WorldDetail | null>(null);
  const [tool, setTool] = useState<ToolInfo | null>(null);
  const [drafts, setDrafts] = useState<Record<string, Data>>({});
  const [palette, setPalette] = useState(false);
  const [help, setHelp] = useState(false);
  // "both": the policy above the timeline, for checking a rule while annotating.
  const [dock, setDock] = useState<"timeline" | "policy" | "both" | null>(null);
  const [dockOpen, setDockOpen] = useState(true);
  const [activeView, setActiveView] = useState<string | null>(null);
  const [after, setAfter] = useState<(WorldProgress & { worldId: string; worldName: string }) | null>(null);
  const [afterError, setAfterError] = useState<AppError | null>(null);
  const composerRef = useRef<HTMLTextAreaElement>(null);
  const workbenchRef = useRef<HTMLDivElement>(null);
  const recordsRef = useRef<HTMLDivElement>(null);
  const runStarted = useRef<number | null>(null);
  const [draftError, setDraftError] = useState<AppError | null>(null);
  const saveDraft = useDraftSaver(
    (slot, text) => api.saveDraft(episodeId, slot, text),
    (e) => setDraftError(asAppError(e)),
  );
  // The drafts stored when the episode opened: what to put back after a crash.
  const restored = useRef<Draft[] | null>(null);
  if (view && restored.current === null) restored.current = view.drafts;

  const acting =
    state.matches({ active: "acting" }) || state.matches({ active: "undoing" }) || state.matches({ active: "redoing" });
  const active = state.matches("active");
  const paused = state.matches("paused");
  // What the recorder allows (sent with the view), within what this screen
  // state offers: nothing while a call is under way or a dialog is open.
  const allowed = view?.transitions;
  const open = !!allowed?.can_submit;
  const canAct = active && !!allowed?.can_step && !acting;
  const transitional = (
    ["loading", "pausing", "resuming", "reviewing", "submitting", "discarding", "restarting"] as const
  ).some((s) => state.matches(s));

  // Half-filled tool forms come back as they were.
  const restoredForms = restored.current;
  useEffect(() => {
    if (!restoredForms) return;
    const forms: Record<string, Data> = {};
    for (const d of restoredForms) {
      if (!d.slot.startsWith("tool:")) continue;
      try {
        forms[d.slot.slice("tool:".length)] = JSON.parse(d.text) as Data;
      } catch {
        // A form draft that isn't JSON (written by something else) is left out.
      }
    }
    setDrafts((now) => ({ ...forms, ...now }));
  }, [restoredForms]);

  // Working time is saved every second while recording, so a crash loses at most that.
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => {
      api.checkpointEpisode(episodeId).catch(() => undefined);
    }, 1000);
    return () => clearInterval(timer);
  }, [active, episodeId]);

  useEffect(() => {
    if (!view?.world_id || world?.id === view.world_id) return;
    api.getWorld(view.world_id).then(setWorld, () => setWorld(null));
  }, [view?.world_id, world?.id]);

  // Show the policy first on a fresh task; the timeline once work has begun.
  const stepCount = view?.steps.length ?? 0;
  useEffect(() => {
    if (!view) return;
    setDock((d) => (d === null ? (stepCount === 0 ? "policy" : "timeline") : d === "policy" && stepCount === 1 ? "timeline" : d));
  }, [view, stepCount]);

  // Click Run → result on screen (after the recorder has committed it).
  useEffect(() => {
    if (runStarted.current === null || acting) return;
    const elapsed = performance.now() - runStarted.current;
    runStarted.current = null;
    const perf = (window.__understudyPerf ??= { runs: [] });
    perf.runs.push(elapsed);
  }, [stepCount, acting]);

  const run = useCallback(
    (action: Action) => {
      runStarted.current = performance.now();
      send({ type: "RUN", action });
    },
    [send],
  );

  const sendMessage = async (message: string) => {
    run({ message });
    const s = await waitFor(actor, (s) => !s.matches({ active: "acting" }));
    return s.context.error === null;
  };

  const pick = (t: ToolInfo) => {
    setPalette(false);
    if (t.view) {
      setActiveView(t.view);
      const v = world?.views.find((x) => x.name === t.view);
      if (v && view && !viewState(view.steps, v).listing && canAct) run({ tool: v.tool, args: { limit: PAGE_SIZE } });
      requestAnimationFrame(() => recordsRef.current?.querySelector<HTMLElement>(".tab.active, .tab")?.focus());
      return;
    }
    setTool(t);
    requestAnimationFrame(() =>
      workbenchRef.current?.querySelector<HTMLElement>(".tool-form input, .tool-form textarea, .tool-form select")?.focus(),
    );
  };

  const goHome = async () => {
    if (active && view && !view.done && view.transitions.can_pause) {
      try {
        await api.pauseEpisode(view.id);
      } catch {
        // Leaving still works; the episode stays in progress.
      }
    }
    onHome();
  };

  const startOver = async () => {
    const yes = await ask(
      "Discard this attempt and start the task again from the beginning?\n\nThe attempt is kept in the record, marked as discarded.",
      { title: "Start over", kind: "warning", okLabel: "Start over", cancelLabel: "Keep working" },
    );
    if (yes) send({ type: "RESTART" });
  };

  // After a submit: where the expert stands in this world, and the next task.
  const submitted = state.matches("submitted");
  useEffect(() => {
    if (!submitted || !view) return;
    let live = true;
    api
      .home()
      .then((home) => {
        const world = home.catalog?.worlds.find((w) => w.id === view.world_id);
        if (live && world) setAfter({ ...worldProgress(world, view.task.id), worldId: world.id, worldName: world.name });
      })
      .catch((e: AppError) => live && setAfterError(e));
    return () => {
      live = false;
    };
  }, [submitted, view]);

  const openNext = async () => {
    const next = after?.next;
    if (!next || !after) return;
    try {
      if (next.progress.open_episode) onOpen(next.progress.open_episode);
      else onOpen((await api.startEpisode(after.worldId, next.id)).id);
    } catch (e) {
      setAfterError(e as AppError);
    }
  };

  const togglePause = () => send({ type: paused ? "RESUME" : "PAUSE" });

  useShortcuts({
    palette: () => canAct && setPalette(true),
    message: () => composerRef.current?.focus(),
    policy: () => {
      setDockOpen(true);
      setDock((d) => (d === "both" ? "both" : d === "policy" && dockOpen ? "timeline" : "policy"));
    },
    undo: () => send({ type: "UNDO" }),
    redo: () => send({ type: "REDO" }),
    pause: () => (active || paused) && togglePause(),
    submit: () => send({ type: "REVIEW" }),
    records: () => recordsRef.current?.querySelector<HTMLElement>(".tab.active, .tab")?.focus(),
    help: () => setHelp(true),
    why: () => {
      setDockOpen(true);
      setDock((d) => (d === "both" ? "both" : "timeline"));
      // After the timeline renders: the last kept step's box (undone steps have none).
      requestAnimationFrame(() => {
        const boxes = document.querySelectorAll<HTMLTextAreaElement>('.ws-dock [data-testid="rationale"]');
        boxes[boxes.length - 1]?.focus();
      });
    },
  });

  if (state.matches("failed") || (!view && error)) {
    return (
      <div className="center-screen">
        <div className="card narrow">
          <h2 className="card-title">This task could not be opened</h2>
          <p>{error?.message}</p>
          <div className="row gap-sm">
            <button type="button" className="btn btn-primary" onClick={() => send({ type: "RETRY" })}>
              Try again
            </button>
            <button type="button" className="btn btn-ghost" onClick={onHome}>
              Back to tasks
            </button>
          </div>
        </div>
      </div>
    );
  }
  if (!view) {
    return (
      <div className="center-screen muted" data-screen="loading">
        Opening the task…
      </div>
    );
  }

  // Look-ups first, then the tools that change records.
  const tools = [...view.tools.filter((t) => !t.view && t.kind === "read"), ...view.tools.filter((t) => !t.view && t.kind === "write")];
  const viewTools = view.tools.filter((t) => t.view);
  const status = state.matches("submitted")
    ? { label: "Submitted", tone: "green" }
    : paused
      ? { label: "Paused", tone: "grey" }
      : view.done
        ? { label: "Task ended", tone: "blue" }
        : open
          ? { label: "Recording", tone: "red" }
          : { label: view.status.replace("_", " "), tone: "grey" };

  const policy = world ? <PolicyPanel policy={world.policy} /> : <p className="muted pad">Loading the policy…</p>;
  const timeline = (
    <Timeline
      steps={view.steps}
      tools={view.tools}
      views={world?.views}
      editable={open}
      onAnnotate={async (idx, rationale, flag) => {
        await api.annotateStep(view.id, idx, rationale, flag);
        send({ type: "ANNOTATED", idx, rationale, flag });
      }}
    />
  );

  return (
    <div className="workspace" data-screen="workspace" data-episode={view.id}>
      <header className="ws-header">
        <div className="ws-title">
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => void goHome()} title="Back to the task list (pauses the task)">
            ← Tasks
          </button>
          <div className="ws-title-text">
            <div className="eyebrow">{view.world_name}</div>
            <h1 className="ws-task-title">{view.task.title}</h1>
          </div>
        </div>
        <div className={`ws-status status-${status.tone}`} data-testid="status" data-status={view.status}>
          <span className="status-dot" aria-hidden="true" />
          {status.label}
          <ActiveTimer ms={view.active_ms} running={active && !view.done} />
        </div>
        <div className="ws-controls">
          <button
            type="button"
            className="btn btn-secondary btn-sm"
            onClick={() => send({ type: "UNDO" })}
            disabled={!active || acting || !view.transitions.can_undo}
            title="Undo the last action. It stays in the record, marked as undone."
            data-testid="undo"
          >
            Undo <ShortcutKeys name="undo" />
          </button>
          {view.transitions.can_redo && (
            <button
              type="button"
              className="btn btn-secondary btn-sm"
              onClick={() => send({ type: "REDO" })}
              disabled={!active || acting}
              title="Do the action you just undid again. The undo and the redo are both kept in the record."
              data-testid="redo"
            >
              Redo <ShortcutKeys name="redo" />
            </button>
          )}
          <button
            type="button"
            className="btn btn-secondary btn-sm"
            onClick={togglePause}
            disabled={!((active && view.transitions.can_pause) || (paused && view.transitions.can_resume)) || acting}
            data-testid="pause"
          >
            {paused ? "Resume" : "Pause"} <ShortcutKeys name="pause" />
          </button>
          <button
            type="button"
            className="btn btn-ghost btn-sm"
            onClick={() => void startOver()}
            disabled={!(active || paused) || acting || !view.transitions.can_abandon}
            data-testid="restart"
          >
            Start over
          </button>
          <button
            type="button"
            className="btn btn-primary btn-sm"
            onClick={() => send({ type: "REVIEW" })}
            disabled={!(active || paused) || acting || !view.transitions.can_submit}
            data-testid="submit"
          >
            Review &amp; submit <ShortcutKeys name="submit" />
          </button>
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setHelp(true)} aria-label="Keyboard shortcuts">
            <Kbd keys={["?"]} />
          </button>
        </div>
      </header>
      {error && <ErrorBanner error={error} onDismiss={() => send({ type: "DISMISS_ERROR" })} />}
      {draftError && (
        <ErrorBanner
          error={{ ...draftError, message: `What you are typing could not be saved: ${draftError.message}` }}
          onDismiss={() => setDraftError(null)}
        />
      )}
      {view.done && open && (
        <div className="banner banner-info">
          {view.steps.some((s) => s.truncated && !s.retracted)
            ? "The step limit for this task was reached."
            : "The task has ended."}{" "}
          Review what you did and submit it, or undo the last action to keep working.
        </div>
      )}
      <div className={`ws-grid${dockOpen ? "" : " dock-closed"}`}>
        <div className="ws-left">
          <Brief task={view.task} />
          <Conversation
            episodeId={view.id}
            task={view.task}
            steps={view.steps}
            disabled={!canAct && !acting}
            busy={acting}
            onSend={sendMessage}
            composerRef={composerRef}
            initialDraft={restored.current?.find((d) => d.slot === MESSAGE_SLOT)?.text}
            onDraft={(text, now) => saveDraft(MESSAGE_SLOT, text, now)}
            closedNote={
              paused
                ? "Paused — resume to write."
                : view.done || !open
                  ? "This task has ended."
                  : "Finish the review first."
            }
          />
        </div>
        <main className="ws-center">
          {paused && (
            <div className="paused-veil" data-testid="paused">
              <div className="card narrow center">
                <h2 className="card-title">Paused</h2>
                <p className="muted">Time is not counted while the task is paused. Nothing is lost.</p>
                <button type="button" className="btn btn-primary" onClick={() => send({ type: "RESUME" })} autoFocus>
                  Resume <ShortcutKeys name="pause" />
                </button>
              </div>
            </div>
          )}
          <section className="panel workbench" ref={workbenchRef} aria-labelledby="tools-title">
            <header className="panel-header">
              <h2 id="tools-title" className="panel-title">
                Tools
              </h2>
              <button
                type="button"
                className="btn btn-secondary btn-sm palette-trigger"
                onClick={() => setPalette(true)}
                disabled={!canAct}
                data-testid="open-palette"
              >
                <span className="muted">Find a tool…</span> <ShortcutKeys name="palette" />
              </button>
            </header>
            <div className="workbench-body">
              {tool ? (
                <ToolForm
                  tool={tool}
                  data={drafts[tool.name] ?? {}}
                  onData={(d) => {
                    setDrafts((all) => ({ ...all, [tool.name]: d }));
                    saveDraft(toolSlot(tool.name), JSON.stringify(d));
                  }}
                  onRun={(args) => run({ tool: tool.name, args })}
                  disabled={!canAct}
                  busy={acting}
                  lastStep={lastStep}
                />
              ) : (
                <div className="tool-grid" data-testid="tool-grid">
                  <p className="muted small">Choose a tool, or press <ShortcutKeys name="palette" /> and type its name.</p>
                  <div className="tool-grid-items">
                    {tools.map((t) => (
                      <button key={t.name} type="button" className="tool-tile" onClick={() => pick(t)} disabled={!canAct} data-tool={t.name}>
                        <span className="tool-tile-title">{t.title}</span>
                        <span className={`chip chip-xs ${t.kind === "read" ? "chip-blue" : "chip-amber"}`}>{kindLabel(t)}</span>
                      </button>
                    ))}
                  </div>
                </div>
              )}
            </div>
          </section>
          <div ref={recordsRef} className="records-wrap">
            {world && (
              <Records
                views={world.views.filter((v) => viewTools.some((t) => t.name === v.tool))}
                steps={view.steps}
                disabled={!canAct}
                busy={acting}
                onRun={(t, args) => run({ tool: t, args })}
                active={activeView}
                onActive={setActiveView}
              />
            )}
          </div>
        </main>
        {!dockOpen && (
          <div className="dock-rail">
            <button type="button" className="rail-btn" onClick={() => { setDockOpen(true); setDock("timeline"); }} title="Show the timeline">
              Timeline
            </button>
            <button type="button" className="rail-btn" onClick={() => { setDockOpen(true); setDock("policy"); }} title="Show the policy (Ctrl+B)">
              Policy
            </button>
          </div>
        )}
        <aside className="ws-dock" hidden={!dockOpen}>
          <div className="dock-tabs" role="tablist" onKeyDown={moveBetweenTabs}>
            <button
              type="button"
              role="tab"
              aria-selected={dock === "timeline"}
              className={`tab${dock === "timeline" ? " active" : ""}`}
              onClick={() => setDock("timeline")}
              data-testid="tab-timeline"
            >
              Timeline <span className="count">{view.steps.filter((s) => !s.retracted).length}</span>
            </button>
            <button
              type="button"
              role="tab"
              aria-selected={dock === "policy"}
              className={`tab${dock === "policy" ? " active" : ""}`}
              onClick={() => setDock("policy")}
              data-testid="tab-policy"
            >
              Policy <ShortcutKeys name="policy" />
            </button>
            <button
              type="button"
              role="tab"
              aria-selected={dock === "both"}
              className={`tab${dock === "both" ? " active" : ""}`}
              onClick={() => setDock("both")}
              title="Show the policy and the timeline together"
              data-testid="tab-both"
            >
              Both
            </button>
            <button
              type="button"
              className="btn btn-ghost btn-xs dock-hide"
              onClick={() => setDockOpen(false)}
              title="Hide this panel to make room"
              aria-label="Hide the side panel"
            >
              Hide »
            </button>
          </div>
          {dock === "both" ? (
            <div className="dock-split" data-testid="dock-both">
              <section className="dock-body dock-half" aria-label="Policy">
                {policy}
              </section>
              <section className="dock-body dock-half" aria-label="Timeline">
                {timeline}
              </section>
            </div>
          ) : (
            <div className="dock-body">{dock === "policy" ? policy : timeline}</div>
          )}
        </aside>
      </div>
      {transitional && !state.matches("loading") && <div className="busy-bar" aria-hidden="true" />}
      {palette && <ToolPalette tools={[...tools, ...viewTools]} onPick={pick} onClose={() => setPalette(false)} />}
      {help && <ShortcutsHelp onClose={() => setHelp(false)} />}
      {review && (state.matches("confirming") || state.matches("submitting")) && (
        <ReviewDialog
          review={review}
          error={error}
          submitting={state.matches("submitting")}
          onSubmit={() => send({ type: "SUBMIT", finalMessage: null })}
          onCancel={() => send({ type: "CANCEL" })}
        />
      )}
      {state.matches("submitted") && (
        <Modal title="Submitted" onClose={onHome} width={520} testId="submitted">
          <div className="stack">
            <p className="lead">Thank you — your work on “{view.task.title}” is recorded and sent for review.</p>
            <p className="muted">
              {plural(view.steps.filter((s) => !s.retracted).length, "action")} ·{" "}
              {plural(view.steps.filter((s) => !s.retracted && isMessage(s.action)).length, "message")} ·{" "}
              {duration(view.active_ms)} worked
            </p>
            {after && (
              <div className="stack-sm" data-testid="world-progress">
                <p>
                  <strong>
                    {after.done} of {after.total}
                  </strong>{" "}
                  tasks done in {after.worldName}
                  {after.next ? "" : " — all of them. Well done."}
                </p>
                <progress className="progress" max={after.total} value={after.done} aria-label="Tasks done" />
              </div>
            )}
            {afterError && <ErrorBanner error={afterError} />}
            <div className="row gap-sm submitted-actions">
              {after?.next && (
                <button type="button" className="btn btn-primary" onClick={() => void openNext()} autoFocus data-testid="next-task">
                  Next task: {after.next.title}
                </button>
              )}
              <button
                type="button"
                className={after?.next ? "btn btn-secondary" : "btn btn-primary"}
                onClick={onHome}
                data-testid="back-to-tasks"
              >
                Back to tasks
              </button>
            </div>
          </div>
        </Modal>
      )}
      {state.matches("discarded") && (
        <Modal title="Discarded" onClose={onHome} width={480}>
          <p>The attempt was discarded. It stays in the record, marked as discarded.</p>
          <button type="button" className="btn btn-primary" onClick={onHome} autoFocus>
            Back to tasks
          </button>
        </Modal>
      )}
    </div>
  );
}
