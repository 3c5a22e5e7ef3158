import { ask } from "@tauri-apps/plugin-dialog";
import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { HomeView } from "../bindings/HomeView";
import type { HubView } from "../bindings/HubView";
import type { WorldSummary } from "../bindings/WorldSummary";
import type { TaskSummary } from "../bindings/TaskSummary";
import { ErrorBanner } from "../components/ErrorBanner";
import { ExpertCard } from "../components/ExpertCard";
import { Assignments } from "../components/hub/Assignments";
import { HubCard } from "../components/hub/HubCard";
import { Kbd } from "../components/Kbd";
import { dateTime, duration, plural } from "../lib/format";

/** How many tasks of a world the list shows at a time. */
const PAGE = 40;

/** How often the start screen refreshes the hub's state (the app syncs by itself). */
const HUB_POLL_MS = 10_000;

/** The world the expert last chose, for this run of the app. */
let rememberedWorld: string | null = null;

function progressLabel(t: TaskSummary): { text: string; tone: string } {
  if (t.progress.open_episode) return { text: "In progress", tone: "amber" };
  if (t.progress.returned) return { text: "Returned", tone: "red" };
  if (t.progress.submitted > 0)
    return { text: t.progress.submitted > 1 ? `Done ×${t.progress.submitted}` : "Done", tone: "green" };
  return { text: "Not started", tone: "grey" };
}

export function Home({
  onOpen,
  onReview,
  onGrading,
  onDashboard,
  onExport,
  onProgress,
  onRubric,
  onHubSignIn,
  onReady,
  initial,
}: {
  onOpen: (episodeId: string) => void;
  /** Opens the review queue. */
  onReview?: () => void;
  /** Opens the agent runs to grade. */
  onGrading?: () => void;
  /** Opens the scores dashboard. */
  onDashboard?: () => void;
  /** Opens the export dialog. */
  onExport?: () => void;
  /** Opens everyone's progress. */
  onProgress?: () => void;
  /** Opens a task's rubric workspace. */
  onRubric?: (worldId: string, taskId: string) => void;
  /** Opens the team hub's sign-in screen. */
  onHubSignIn?: () => void;
  onReady?: () => void;
  /** The first load, already under way. */
  initial?: Promise<HomeView>;
}) {
  const [home, setHome] = useState<HomeView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [filter, setFilter] = useState("");
  const [starting, setStarting] = useState<string | null>(null);
  const filterRef = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLDivElement>(null);

  const refresh = useCallback(async (first?: Promise<HomeView>) => {
    try {
      setHome(await (first ?? api.home()));
    } catch (e) {
      setError(e as AppError);
    }
  }, []);
  const [hub, setHub] = useState<HubView | null>(null);
  const [hubBusy, setHubBusy] = useState(false);
  const hubCall = useCallback(async (call: () => Promise<HubView>) => {
    try {
      setHub(await call());
    } catch (e) {
      setError(e as AppError);
    }
  }, []);
  useEffect(() => {
    void hubCall(api.hubStatus);
    const timer = window.setInterval(() => void hubCall(api.hubStatus), HUB_POLL_MS);
    return () => window.clearInterval(timer);
  }, [hubCall]);
  const hubAct = async (call: () => Promise<HubView>) => {
    setHubBusy(true);
    await hubCall(call);
    setHubBusy(false);
  };
  const catalog = home?.catalog ?? null;
  const expert = home ? home.expert : undefined;
  const experts = home?.experts ?? [];
  const open = home?.open_episodes ?? [];

  useEffect(() => {
    void refresh(initial);
  }, [refresh, initial]);

  useEffect(() => {
    if (home && onReady) onReady();
  }, [home, onReady]);

  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (e.key === "/" && t?.tagName !== "INPUT" && t?.tagName !== "TEXTAREA") {
        e.preventDefault();
        filterRef.current?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const start = async (worldId: string, task: TaskSummary) => {
    if (task.progress.open_episode) {
      onOpen(task.progress.open_episode);
      return;
    }
    setStarting(`${worldId}/${task.id}`);
    try {
      const view = await api.startEpisode(worldId, task.id);
      onOpen(view.id);
    } catch (e) {
      setError(e as AppError);
      setStarting(null);
    }
  };

  const discard = async (id: string, title: string) => {
    const yes = await ask(
      `Discard your attempt at “${title}”?\n\nIt is kept in the record, marked as discarded, and will not be sent for review.`,
      { title: "Discard attempt", kind: "warning", okLabel: "Discard", cancelLabel: "Keep it" },
    );
    if (!yes) return;
    try {
      await api.discardEpisode(id);
      await refresh();
    } catch (e) {
      setError(e as AppError);
    }
  };

  const worlds = catalog?.worlds ?? [];
  // The world last chosen stays chosen when the expert comes back to the list.
  const [selected, setSelected] = useState<string | null>(rememberedWorld);
  const [shown, setShown] = useState(PAGE);
  const world = worlds.find((w) => w.id === selected) ?? worlds[0] ?? null;
  const query = filter.trim().toLowerCase();
  const matches = (w: WorldSummary) =>
    query ? w.tasks.filter((t) => `${t.title} ${t.id} ${t.summary}`.toLowerCase().includes(query)) : w.tasks;
  const tasks = world ? matches(world) : [];

  // Up and down move between tasks, as in a list.
  const onListKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    const buttons = Array.from(listRef.current?.querySelectorAll<HTMLButtonElement>("button.task-open") ?? []);
    const i = buttons.indexOf(document.activeElement as HTMLButtonElement);
    const next = buttons[e.key === "ArrowDown" ? Math.min(buttons.length - 1, i + 1) : Math.max(0, i - 1)];
    next?.focus();
    e.preventDefault();
  };

  const noExpert = !expert;

  return (
    <div className="home" data-screen="home">
      <header className="topbar">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            U
          </span>
          <span className="brand-name">Understudy</span>
          <span className="brand-sub">Expert capture</span>
        </div>
        <div className="topbar-right muted small row gap-sm">
          <span>
            Press <Kbd keys={["/"]} /> to find a task
          </span>
          {onReview && (
            <button type="button" className="btn btn-secondary btn-sm" onClick={onReview} data-testid="open-review">
              Review recordings
            </button>
          )}
          {onGrading && (
            <button type="button" className="btn btn-secondary btn-sm" onClick={onGrading} data-testid="open-grading-list">
              Grade agent runs
            </button>
          )}
          {onDashboard && (
            <button type="button" className="btn btn-secondary btn-sm" onClick={onDashboard} data-testid="open-dashboard">
              Scores
            </button>
          )}
          {onProgress && (
            <button type="button" className="btn btn-secondary btn-sm" onClick={onProgress} data-testid="open-progress">
              Progress
            </button>
          )}
          {onExport && (
            <button type="button" className="btn btn-secondary btn-sm" onClick={onExport} data-testid="open-export-home">
              Export
            </button>
          )}
        </div>
      </header>
      <main className="home-main">
        <div className="home-content">
          {home?.startup_error && <ErrorBanner error={home.startup_error} />}
          {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
          {open.length > 0 && (
            <section className="section" aria-labelledby="continue-title">
              <h2 id="continue-title" className="section-title">
                Continue where you left off
              </h2>
              <ul className="resume-list" data-testid="resume-list">
                {open.map((e) => (
                  <li key={e.id} className="card resume-item">
                    <div className="resume-text">
                      <div className="resume-title">{e.task_title}</div>
                      <div className="muted small">
                        {e.world_name} · {plural(e.steps, "action")} · {duration(e.active_ms)} worked · last change{" "}
                        {dateTime(e.updated_at)}
                      </div>
                    </div>
                    <span className={`chip chip-${e.status === "paused" ? "grey" : "amber"}`}>
                      {e.status === "paused" ? "Paused" : "In progress"}
                    </span>
                    <button type="button" className="btn btn-primary" onClick={() => onOpen(e.id)}>
                      Resume
                    </button>
                    <button type="button" className="btn btn-ghost btn-sm" onClick={() => void discard(e.id, e.task_title)}>
                      Discard
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          )}

          {hub?.account && (
            <Assignments
              assignments={hub.assignments}
              catalog={catalog}
              disabled={noExpert}
              starting={starting}
              onStart={(worldId, task) => void start(worldId, task)}
            />
          )}

          <section className="card picker" aria-labelledby="tasks-title">
            <header className="picker-header">
              <h2 id="tasks-title" className="section-title">
                Tasks
              </h2>
              <input
                ref={filterRef}
                className="search"
                type="search"
                placeholder="Find a task…"
                aria-label="Find a task"
                value={filter}
                onChange={(e) => {
                  setFilter(e.target.value);
                  setShown(PAGE);
                }}
              />
            </header>
            {noExpert && expert !== undefined && (
              <p className="notice picker-notice">Fill in your profile on the right to start a task.</p>
            )}
            {catalog?.problems.map((p) => (
              <div key={p.folder} className="banner banner-warn picker-notice">
                <strong>A world could not be opened.</strong> {p.message}
                {p.folder && <div className="small muted">{p.folder}</div>}
              </div>
            ))}
            {!catalog && !home?.startup_error && <p className="muted pad">Loading the worlds…</p>}
            {world && (
              <div className="picker-body">
                <nav className="world-list" aria-label="Worlds">
                  {worlds.map((w) => {
                    const done = w.tasks.filter((t) => t.progress.submitted > 0).length;
                    const n = matches(w).length;
                    return (
                      <button
                        key={w.id}
                        type="button"
                        className={`world-item${w.id === world.id ? " active" : ""}`}
                        aria-current={w.id === world.id}
                        onClick={() => {
                          setSelected(w.id);
                          rememberedWorld = w.id;
                          setShown(PAGE);
                        }}
                        data-world={w.id}
                      >
                        <span className="world-item-name">{w.name}</span>
                        <span className="muted small">
                          {query ? `${n} matching` : plural(w.tasks.length, "task")}
                          {done > 0 && ` · ${done} done`}
                        </span>
                      </button>
                    );
                  })}
                </nav>
                <div className="task-pane" ref={listRef} onKeyDown={onListKey}>
                  <div className="task-pane-head">
                    <h3 className="world-name">
                      {world.name} <span className="muted small">v{world.version}</span>
                    </h3>
                    <p className="muted small world-desc">{world.description}</p>
                  </div>
                  <ul className="task-list">
                    {tasks.slice(0, shown).map((t) => {
                      const p = progressLabel(t);
                      const key = `${world.id}/${t.id}`;
                      return (
                        <li key={t.id} className="task-row" data-task={t.id}>
                          <div className="task-text">
                            <div className="task-title">
                              {t.title}
                              {t.difficulty && <span className={`chip chip-outline diff-${t.difficulty}`}>{t.difficulty}</span>}
                            </div>
                            <div className="muted small task-instruction">{t.summary}</div>
                            {t.progress.returned && (
                              <div className="small task-returned" data-testid="returned">
                                Returned by {t.progress.returned.reviewer}: “{t.progress.returned.comment}”
                              </div>
                            )}
                          </div>
                          <span className={`chip chip-${p.tone}`}>{p.text}</span>
                          {onRubric && (
                            <button
                              type="button"
                              className="btn btn-ghost btn-sm task-rubric"
                              onClick={() => onRubric(world.id, t.id)}
                              aria-label={`Rubric: ${t.title}`}
                              data-testid="open-rubric"
                            >
                              Rubric
                            </button>
                          )}
                          <button
                            type="button"
                            className={`btn task-open ${t.progress.open_episode ? "btn-primary" : "btn-secondary"}`}
                            disabled={noExpert || starting !== null}
                            onClick={() => void start(world.id, t)}
                            aria-label={`${t.progress.open_episode ? "Resume" : "Start"}: ${t.title}`}
                          >
                            {starting === key
                              ? "Opening…"
                              : t.progress.open_episode
                                ? "Resume"
                                : t.progress.returned
                                  ? "Try again"
                                  : t.progress.submitted > 0
                                  ? "Do again"
                                  : "Start"}
                          </button>
                        </li>
                      );
                    })}
                    {tasks.length === 0 && <li className="muted small task-row">No task matches “{filter}”.</li>}
                    {tasks.length > shown && (
                      <li className="task-row task-more">
                        <button type="button" className="btn btn-ghost btn-sm" onClick={() => setShown(shown + PAGE)}>
                          Show {Math.min(PAGE, tasks.length - shown)} more of {tasks.length - shown}
                        </button>
                      </li>
                    )}
                  </ul>
                </div>
              </div>
            )}
          </section>
        </div>
        <aside className="home-side">
          {expert !== undefined && (
            <ExpertCard
              expert={expert}
              experts={experts}
              onChanged={() => void refresh()}
            />
          )}
          {onHubSignIn && (
            <HubCard
              view={hub}
              busy={hubBusy}
              onSignIn={onHubSignIn}
              onSync={() => void hubAct(api.hubSync)}
              onSignOut={() => void hubAct(api.hubSignOut)}
            />
          )}
          <section className="card how">
            <h2 className="card-title">How recording works</h2>
            <ol className="how-list">
              <li>Pick a task. Read the brief, the customer's message and the policy.</li>
              <li>Work as you normally would: look things up, use the tools, write to the customer.</li>
              <li>Every action is saved the moment it happens. Add a short “why” where it helps.</li>
              <li>Review what changed, then submit. You can pause or undo at any time.</li>
            </ol>
          </section>
          {home?.store_path && (
            <p className="small muted storage" title={home.store_path}>
              Recordings are saved in {home.store_path}
            </p>
          )}
        </aside>
      </main>
    </div>
  );
}
