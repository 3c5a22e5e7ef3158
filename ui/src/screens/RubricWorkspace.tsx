import { listen } from "@tauri-apps/api/event";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { Checked } from "../bindings/Checked";
import type { LintProgressEvent } from "../bindings/LintProgressEvent";
import type { LintView } from "../bindings/LintView";
import type { RubricDoc } from "../bindings/RubricDoc";
import type { RubricWorkspaceView } from "../bindings/RubricWorkspaceView";
import type { SavedView } from "../bindings/SavedView";
import type { TryView } from "../bindings/TryView";
import { ErrorBanner } from "../components/ErrorBanner";
import { HubWorkNote, useHubWork } from "../components/hub/HubWork";
import { CriterionForm, kindLabel } from "../components/rubric/CriterionForm";
import { CriterionList } from "../components/rubric/CriterionList";
import { LintPanel, TryPanel } from "../components/rubric/LintPanel";
import { str, type Fields } from "../components/rubric/fields";
import { VersionsPanel } from "../components/rubric/VersionsPanel";

/** The kind of criterion that would catch a class of survivor nobody checks yet. */
const KIND_FOR_CLASS: Record<string, string> = {
  "drop-step": "state",
  perturb: "state",
  forbidden: "action",
  "drop-message": "message",
  stuffing: "message",
  spray: "message",
  "near-miss": "message",
  "refused-attempt": "scope",
  disclosure: "scope",
  "dropped-read": "action",
  detour: "action",
};

function newCriterion(kind: string, taken: Set<string>, extra: Fields = {}): Fields {
  let n = 1;
  while (taken.has(`${kind}-${n}`)) n++;
  const base: Fields = { id: `${kind}-${n}`, kind, points: 1 };
  if (kind === "state") base.changes = { none: true };
  if (kind === "message") base.number = "";
  if (kind === "scope") return { ...base, check: "disclosure", points: -1, ...extra };
  return { ...base, ...extra };
}

function bump(version: string): string {
  return /^\d+$/.test(version) ? String(Number(version) + 1) : `${version}.1`;
}

let jobs = 0;

export function RubricWorkspace({ worldId, taskId, onHome }: { worldId: string; taskId: string; onHome: () => void }) {
  const [view, setView] = useState<RubricWorkspaceView | null>(null);
  const [doc, setDoc] = useState<RubricDoc | null>(null);
  const [checked, setChecked] = useState<Checked | null>(null);
  const [draftedFrom, setDraftedFrom] = useState<string | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [dirty, setDirty] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [lintRunning, setLintRunning] = useState(false);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [lint, setLint] = useState<LintView | null>(null);
  const [tryRun, setTryRun] = useState("solution");
  const [tried, setTried] = useState<TryView | null>(null);
  const [saved, setSaved] = useState<SavedView | null>(null);
  const editorRef = useRef<HTMLDivElement>(null);
  const checkSeq = useRef(0);
  // Signed in to a team hub: saved versions are also sent to it.
  const hub = useHubWork();

  const load = useCallback(async () => {
    try {
      const v = await api.openRubric(worldId, taskId);
      setView(v);
      setTryRun(v.runs[0]?.id ?? "solution");
      if (v.rubric) {
        setDoc(v.rubric.doc);
        setChecked(v.rubric.checked);
      }
    } catch (e) {
      setError(e as AppError);
    }
  }, [worldId, taskId]);

  useEffect(() => {
    void load();
  }, [load]);

  // Every edit is checked by the engine: sentences and problems come back.
  const edit = useCallback(
    (next: RubricDoc) => {
      setDoc(next);
      setDirty(true);
      setSaved(null);
      const seq = ++checkSeq.current;
      api
        .checkRubric(worldId, next)
        .then((c) => {
          if (seq === checkSeq.current) setChecked(c);
        })
        .catch((e) => setError(e as AppError));
    },
    [worldId],
  );

  const draft = async () => {
    setBusy("draft");
    setError(null);
    try {
      const d = await api.draftRubric(worldId, taskId);
      setDoc(d.doc);
      setChecked(d.checked);
      setDraftedFrom(d.from);
      setDirty(true);
      setLint(null);
    } catch (e) {
      setError(e as AppError);
    } finally {
      setBusy(null);
    }
  };

  const runLint = async () => {
    if (!doc) return;
    const job = `lint-${++jobs}`;
    setLintRunning(true);
    setProgress(null);
    setError(null);
    const seen = ((window as unknown as { __understudyLint?: { events: number } }).__understudyLint = { events: 0 });
    const stop = await listen<LintProgressEvent>("rubric-lint-progress", (e) => {
      if (e.payload.job !== job) return;
      seen.events += 1;
      setProgress({ done: e.payload.done, total: e.payload.total });
    }).catch(() => () => undefined);
    try {
      setLint(await api.lintRubric(worldId, doc, job));
    } catch (e) {
      setError(e as AppError);
    } finally {
      stop();
      setLintRunning(false);
    }
  };

  const runTry = async () => {
    if (!doc) return;
    setBusy("try");
    try {
      setTried(await api.tryRubric(worldId, doc, tryRun));
    } catch (e) {
      setError(e as AppError);
    } finally {
      setBusy(null);
    }
  };

  const save = async () => {
    if (!doc) return;
    setBusy("save");
    setError(null);
    try {
      const next = view?.rubric && dirty && !draftedFrom ? { ...doc, version: bump(doc.version) } : doc;
      const s = await api.saveRubric(worldId, next);
      setDoc(next);
      setSaved(s);
      setDirty(false);
      setDraftedFrom(null);
      setView((v) => (v ? { ...v, versions: s.versions } : v));
      void hub.refresh();
    } catch (e) {
      setError(e as AppError);
    } finally {
      setBusy(null);
    }
  };

  const preview = useCallback((query: string, run: string) => api.previewQuery(worldId, taskId, run, query), [worldId, taskId]);

  const criteria = (doc?.criteria ?? []) as Fields[];
  const setCriteria = (list: Fields[]) => doc && edit({ ...doc, criteria: list });
  const open = (i: number) => {
    setSelected(i);
    requestAnimationFrame(() => editorRef.current?.querySelector<HTMLElement>("textarea, input, select")?.focus());
  };
  const move = (from: number, to: number) => {
    const list = [...criteria];
    const [c] = list.splice(from, 1);
    if (!c) return;
    list.splice(to, 0, c);
    setCriteria(list);
    if (selected === from) setSelected(to);
  };
  const remove = (i: number) => {
    setCriteria(criteria.filter((_, j) => j !== i));
    setSelected(null);
  };
  const add = (kind: string, extra?: Fields) => {
    const list = [...criteria, newCriterion(kind, new Set(criteria.map((c) => str(c.id))), extra)];
    setCriteria(list);
    open(list.length - 1);
  };
  const indexOf = (id: string) => criteria.findIndex((c) => c.id === id);
  const sentenceOf = (id: string) => {
    const i = indexOf(id);
    return i < 0 ? null : (checked?.sentences[i] ?? id);
  };
  const problems = checked?.problems ?? [];
  const sections = useMemo(() => (doc?.sections ?? []).map((s) => str((s as Fields).id)).filter(Boolean), [doc]);
  const invalid = problems.length > 0;

  // Ctrl+S saves, Ctrl+L lints, Escape closes the editor.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s" && doc) {
        e.preventDefault();
        if (!invalid) void save();
      } else if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "l" && doc) {
        e.preventDefault();
        if (!invalid && !lintRunning) void runLint();
      } else if (e.key === "Escape" && selected !== null && !e.defaultPrevented) {
        // Not when a field used it (the SQL editor closing its completions).
        setSelected(null);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  const selectedCriterion = selected !== null ? criteria[selected] : undefined;
  const saveLabel = view?.rubric && dirty && !draftedFrom ? `Save as version ${bump(doc?.version ?? "1")}` : `Save as version ${doc?.version ?? "1"}`;

  return (
    <div className="rubric-screen" data-screen="rubric">
      <header className="topbar">
        <div className="brand">
          <button type="button" className="btn btn-ghost btn-sm" onClick={onHome} data-testid="rubric-back">
            ← Tasks
          </button>
          <span className="brand-name">Rubric</span>
          <span className="brand-sub">
            {view ? `${view.task_title} · ${view.world_name}` : "Loading…"}
          </span>
        </div>
        <div className="topbar-right">
          {doc && (
            <>
              <span className="small muted rw-state" data-testid="rubric-state">
                {saved ? `Saved as version ${saved.version}` : dirty ? "Not saved yet" : view?.rubric?.origin === "saved" ? "Your saved version" : "As the world ships it"}
              </span>
              <button type="button" className="btn btn-primary btn-sm" onClick={() => void save()} disabled={invalid || busy === "save" || (!dirty && !draftedFrom)} data-testid="save" title="Ctrl+S">
                {busy === "save" ? "Saving…" : saveLabel}
              </button>
            </>
          )}
        </div>
      </header>
      <main className="rw-main">
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        {!view && !error && <p className="muted">Opening the rubric…</p>}
        {view && !doc && (
          <section className="card rw-empty" data-testid="no-rubric">
            <h2 className="card-title">This task has no rubric yet</h2>
            <p>
              A rubric says, criterion by criterion, what “done correctly” means for this task. Start from a draft made from a run
              that was done right, then edit it.
            </p>
            <p className="small muted">The draft will start from {view.draft_from}.</p>
            <button type="button" className="btn btn-primary" onClick={() => void draft()} disabled={busy === "draft"} data-testid="draft" autoFocus>
              {busy === "draft" ? "Drafting…" : "Draft from a gold run"}
            </button>
          </section>
        )}
        {doc && checked && (
          <div className="rw-columns">
            <section className="card rw-criteria" aria-labelledby="criteria-title">
              <header className="rw-panel-head">
                <h2 id="criteria-title" className="card-title">
                  {criteria.length} criteria
                </h2>
                <div className="rw-add">
                  {!draftedFrom && (
                    <button type="button" className="btn btn-ghost btn-sm" onClick={() => void draft()} disabled={busy === "draft"} data-testid="redraft" title={`Start again from ${view?.draft_from ?? "a gold run"}`}>
                      {busy === "draft" ? "Drafting…" : "New draft from a gold run"}
                    </button>
                  )}
                  <label className="small muted" htmlFor="add-kind">
                    Add:
                  </label>
                  <select
                    id="add-kind"
                    value=""
                    onChange={(e) => e.target.value && add(e.target.value)}
                    data-testid="add-criterion"
                  >
                    <option value="">a criterion about…</option>
                    {["state", "action", "message", "scope", "judged"].map((k) => (
                      <option key={k} value={k}>
                        {kindLabel(k)}
                      </option>
                    ))}
                  </select>
                </div>
              </header>
              {draftedFrom && (
                <div className="banner banner-info" data-testid="drafted-from">
                  Drafted from {draftedFrom}. Read each sentence, fix what is not quite right, then check and save. Nothing is saved yet.
                </div>
              )}
              {saved && (
                <div className="banner banner-info" data-testid="saved">
                  <div>
                    Saved as version {saved.version} (fingerprint {saved.hash.slice(0, 12)}). Scores made with it record this version.
                  </div>
                  <div className="small muted">
                    File: <code>{saved.path}</code>
                  </div>
                  <HubWorkNote view={hub.view} workKey={`rubric:${saved.hash}`} />
                </div>
              )}
              {problems.some((p) => p.criterion === null) && (
                <div className="banner banner-error">
                  {problems
                    .filter((p) => p.criterion === null)
                    .map((p, i) => (
                      <div key={i}>{p.message}</div>
                    ))}
                </div>
              )}
              <p className="small muted rw-keys">
                ↑ ↓ to move between criteria · Enter to edit · Alt+↑ / Alt+↓ to reorder (or drag) · Delete to remove
              </p>
              <CriterionList
                criteria={criteria}
                sentences={checked.sentences}
                problems={problems}
                selected={selected}
                onOpen={open}
                onMove={move}
                onDelete={remove}
              />
            </section>
            <div className="rw-side">
              {selectedCriterion && selected !== null && (
                <section className="card rw-panel rw-editor" ref={editorRef} aria-labelledby="editor-title" data-testid="criterion-editor">
                  <header className="rw-panel-head">
                    <h2 id="editor-title" className="card-title">
                      Criterion {selected + 1}: {checked.sentences[selected] ?? str(selectedCriterion.id)}
                    </h2>
                    <button type="button" className="btn btn-ghost btn-sm" onClick={() => setSelected(null)} data-testid="close-editor">
                      Done
                    </button>
                  </header>
                  <CriterionForm
                    criterion={selectedCriterion}
                    problems={problems.filter((p) => p.criterion === selected)}
                    tools={view?.tools ?? []}
                    tables={view?.tables ?? []}
                    sections={sections}
                    onChange={(c) => setCriteria(criteria.map((x, j) => (j === selected ? c : x)))}
                    runs={view?.runs ?? []}
                    preview={preview}
                  />
                </section>
              )}
              <LintPanel
                running={lintRunning}
                progress={progress}
                result={lint}
                sentenceOf={sentenceOf}
                onLint={() => void runLint()}
                onOpenCriterion={(id) => {
                  const i = indexOf(id);
                  if (i >= 0) open(i);
                }}
                onAddFor={(cls) => add(KIND_FOR_CLASS[cls] ?? "state")}
                disabled={invalid}
              />
              <TryPanel
                runs={view?.runs ?? []}
                run={tryRun}
                onRun={setTryRun}
                onTry={() => void runTry()}
                result={tried}
                busy={busy === "try"}
                disabled={invalid}
              />
              {view && view.versions.length > 0 && (
                <VersionsPanel
                  key={view.versions[0]?.id}
                  versions={view.versions}
                  compare={(from, to) => api.compareRubricVersions(worldId, taskId, from, to)}
                />
              )}
            </div>
          </div>
        )}
      </main>
    </div>
  );
}
