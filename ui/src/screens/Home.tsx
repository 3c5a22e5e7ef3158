import { ask } from "@tauri-apps/plugin-dialog";
import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { HomeView } from "../bindings/HomeView";
import type { TaskSummary } from "../bindings/TaskSummary";
import { ErrorBanner } from "../components/ErrorBanner";
import { ExpertCard } from "../components/ExpertCard";
import { Kbd } from "../components/Kbd";
import { dateTime, duration } from "../lib/format";

/** Worlds with more tasks than this show the first few until expanded. */
const FOLDED = 10;

function progressLabel(t: TaskSummary): { text: string; tone: string } {
  if (t.progress.open_episode) return { text: "In progress", tone: "amber" };
  if (t.progress.submitted > 0)
    return { text: t.progress.submitted > 1 ? `Done ×${t.progress.submitted}` : "Done", tone: "green" };
  return { text: "Not started", tone: "grey" };
}

export function Home({
  onOpen,
  onReady,
  initial,
}: {
  onOpen: (episodeId: string) => void;
  onReady?: () => void;
  /** The first load, already under way. */
  initial?: Promise<HomeView>;
}) {
  const [home, setHome] = useState<HomeView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [filter, setFilter] = useState("");
  const [starting, setStarting] = useState<string | null>(null);
  const [expanded, setExpanded] = useState<Record<string, boolean>>({});
  const filterRef = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLDivElement>(null);

  const refresh = useCallback(async (first?: Promise<HomeView>) => {
    try {
      setHome(await (first ?? api.home()));
    } catch (e) {
      setError(e as AppError);
    }
  }, []);
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

  const worlds = useMemo(() => {
    const q = filter.trim().toLowerCase();
    return (catalog?.worlds ?? []).map((w) => ({
      ...w,
      tasks: q
        ? w.tasks.filter((t) => `${t.title} ${t.id} ${t.summary} ${w.name}`.toLowerCase().includes(q))
        : w.tasks,
    }));
  }, [catalog, filter]);

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
        <div className="topbar-right muted small">
          Press <Kbd keys={["/"]} /> to find a task
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
                        {e.world_name} · {e.steps} {e.steps === 1 ? "action" : "actions"} · {duration(e.active_ms)}{" "}
                        worked · last change {dateTime(e.updated_at)}
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

          <section className="section" aria-labelledby="tasks-title">
            <div className="row space-between align-end">
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
                onChange={(e) => setFilter(e.target.value)}
              />
            </div>
            {noExpert && expert !== undefined && (
              <p className="notice">Fill in your profile on the right to start a task.</p>
            )}
            {!catalog && !home?.startup_error && <p className="muted">Loading the worlds…</p>}
            {catalog?.problems.map((p) => (
              <div key={p.folder} className="banner banner-warn">
                <strong>A world could not be opened.</strong> {p.message}
                {p.folder && <div className="small muted">{p.folder}</div>}
              </div>
            ))}
            <div ref={listRef} onKeyDown={onListKey}>
              {worlds.map((w) => (
                <article key={w.id} className="card world" data-world={w.id}>
                  <header className="world-header">
                    <div>
                      <h3 className="world-name">{w.name}</h3>
                      <p className="muted small world-desc">{w.description}</p>
                    </div>
                    <span className="muted small nowrap">
                      {w.tasks.length} {w.tasks.length === 1 ? "task" : "tasks"} · v{w.version}
                    </span>
                  </header>
                  <ul className="task-list">
                    {(expanded[w.id] || filter || w.tasks.length <= FOLDED ? w.tasks : w.tasks.slice(0, FOLDED - 2)).map((t) => {
                      const p = progressLabel(t);
                      const key = `${w.id}/${t.id}`;
                      return (
                        <li key={t.id} className="task-row" data-task={t.id}>
                          <div className="task-text">
                            <div className="task-title">
                              {t.title}
                              {t.difficulty && <span className={`chip chip-outline diff-${t.difficulty}`}>{t.difficulty}</span>}
                            </div>
                            <div className="muted small task-instruction">{t.summary}</div>
                          </div>
                          <span className={`chip chip-${p.tone}`}>{p.text}</span>
                          <button
                            type="button"
                            className={`btn task-open ${t.progress.open_episode ? "btn-primary" : "btn-secondary"}`}
                            disabled={noExpert || starting !== null}
                            onClick={() => void start(w.id, t)}
                            aria-label={`${t.progress.open_episode ? "Resume" : "Start"}: ${t.title}`}
                          >
                            {starting === key
                              ? "Opening…"
                              : t.progress.open_episode
                                ? "Resume"
                                : t.progress.submitted > 0
                                  ? "Do again"
                                  : "Start"}
                          </button>
                        </li>
                      );
                    })}
                    {w.tasks.length === 0 && <li className="muted small task-row">No task matches.</li>}
                    {!filter && w.tasks.length > FOLDED && (
                      <li className="task-row task-more">
                        <button
                          type="button"
                          className="btn btn-ghost btn-sm"
                          onClick={() => setExpanded({ ...expanded, [w.id]: !expanded[w.id] })}
                        >
                          {expanded[w.id] ? "Show fewer tasks" : `Show all ${w.tasks.length} tasks`}
                        </button>
                      </li>
                    )}
                  </ul>
                </article>
              ))}
            </div>
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
