import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { SheetCriterion } from "../bindings/SheetCriterion";
import type { SheetView } from "../bindings/SheetView";
import type { StepView } from "../bindings/StepView";
import type { WorldLabels } from "../bindings/WorldLabels";
import { ScreenBar } from "../components/ScreenBar";
import { HubScreenNote, HubWorkNote, useHubWork } from "../components/hub/HubWork";
import { ErrorBanner } from "../components/ErrorBanner";
import { resultLine } from "../components/Timeline";
import { argsSummary, cell, dateTime, isMessage } from "../lib/format";
import { columnLabel, humanize } from "../lib/errors";

/** A score for people: "0.86", or what it is waiting for. */
export function scoreText(value: number | null, range: [number, number]): string {
  if (value !== null) return value.toFixed(2);
  return `waiting for a grade (between ${range[0].toFixed(2)} and ${range[1].toFixed(2)})`;
}

function verdict(met: boolean | null, points: number): { text: string; tone: string } {
  if (met === null) return { text: "Not graded yet", tone: "grey" };
  // A negative criterion that is met is the bad thing happening.
  const good = met === points >= 0;
  return { text: met ? "Met" : "Not met", tone: good ? "green" : "red" };
}

function Verdict({ met, points, testId }: { met: boolean | null; points: number; testId?: string }) {
  const v = verdict(met, points);
  return (
    <span className={`chip chip-xs chip-${v.tone}`} data-testid={testId} data-met={met === null ? "" : String(met)}>
      {v.text}
    </span>
  );
}

/** A step as the expert's tool finder names it ("Open ticket — Ticket id: T-1049"). */
export function stepLine(s: StepView, labels?: WorldLabels): string {
  if (isMessage(s.action)) return `Message: ${s.action.message}`;
  const tool = columnLabel(s.action.tool, labels?.tool_titles);
  const args = argsSummary(s.action.args);
  return args ? `${tool} — ${args}` : tool;
}

/** What a check's found column is called on screen: the first table whose labels name it. */
function foundLabel(column: string, labels?: WorldLabels): string {
  // A query's count comes back named by its SQL ("count(*)").
  if (/^count\(.*\)$/i.test(column.trim())) return "Number of records";
  for (const cols of Object.values(labels?.column_labels ?? {})) {
    const label = cols?.[column];
    if (label) return label;
  }
  return humanize(column);
}

/** What an automatic check found, as evidence to read. */
function EvidenceView({ c, labels }: { c: SheetCriterion; labels?: WorldLabels }) {
  const e = c.evidence;
  const rows = (e.rows ?? []) as Record<string, unknown>[];
  return (
    <div className="gr-evidence" data-testid="evidence">
      <div>{c.error ?? e.detail}</div>
      {e.excerpt && <blockquote>“{e.excerpt}”</blockquote>}
      {e.steps && e.steps.length > 0 && <div className="small muted">Step{e.steps.length > 1 ? "s" : ""} {e.steps.map((s) => s + 1).join(", ")}</div>}
      {rows.length > 0 && (
        <div className="small muted gr-rows">
          Found: {rows.map((r) => Object.entries(r).map(([k, v]) => `${foundLabel(k, labels)}: ${cell(v)}`).join(", ")).join("; ")}
        </div>
      )}
    </div>
  );
}

interface Editing {
  id: string;
  met: boolean | null;
  reason: string;
  /** On a scale: the level chosen (it decides `met`). */
  level?: string | null;
}

/** Whether a grade at a level worth `earned` of the criterion's `points` counts as met (as the engine reads it). */
export function levelMet(points: number, earned: number): boolean {
  return points < 0 ? earned < 0 : earned > 0 || points === 0;
}

/** One criterion: the check's verdict or the grader's, and the form to grade or override. */
export function CriterionCard({
  c,
  editing,
  onEdit,
  onChange,
  onSave,
  onCancel,
  saving,
  focused,
  onFocus,
  labels,
}: {
  c: SheetCriterion;
  editing: Editing | null;
  onEdit: (met: boolean | null) => void;
  onChange: (e: Editing) => void;
  onSave: () => void;
  onCancel: () => void;
  saving: boolean;
  focused: boolean;
  onFocus: () => void;
  /** The world's names for the tables and columns the evidence names. */
  labels?: WorldLabels;
}) {
  const reason = useRef<HTMLTextAreaElement | null>(null);
  useEffect(() => {
    if (!editing) return;
    reason.current?.focus();
    // Focus alone scrolls just enough to show the box's first line; the
    // grader should see the whole form, its Save button included.
    reason.current?.closest(".gr-form")?.scrollIntoView?.({ block: "nearest" });
  }, [editing?.id, editing?.met]);
  const g = c.grade;
  const overridden = !c.judged && g !== null && g.met !== c.automatic;
  return (
    <li
      className={`gr-criterion${focused ? " gr-focused" : ""}`}
      tabIndex={0}
      data-testid="criterion"
      data-criterion={c.id}
      data-judged={c.judged}
      onFocus={onFocus}
      aria-label={c.description}
    >
      <div className="gr-criterion-head">
        <div className="gr-criterion-words">
          {c.description}
          <span className="small muted">
            {" "}
            · {c.points > 0 ? `+${c.points}` : c.points} point{Math.abs(c.points) === 1 ? "" : "s"}
            {c.gate && " · must be met, or the score is 0"}
          </span>
        </div>
        {c.judged ? (
          <Verdict met={g?.met ?? null} points={c.points} testId="your-grade" />
        ) : (
          <span className="row gap-xs">
            {overridden && <span className="small muted gr-struck">check: {c.automatic ? "met" : "not met"}</span>}
            <Verdict met={g ? g.met : c.automatic} points={c.points} testId="verdict" />
          </span>
        )}
      </div>
      {c.judged ? (
        <p className="small muted gr-guidance">{c.guidance}</p>
      ) : (
        <EvidenceView c={c} labels={labels} />
      )}
      {g && !editing && (
        <div className="small gr-given" data-testid="given">
          {c.judged ? "Your grade" : overridden ? "You overrode the check" : "You confirmed the check"}:{" "}
          <strong>{g.level ? `“${g.level}”` : g.met ? "met" : "not met"}</strong> — “{g.reason}”{" "}
          <span className="muted">({dateTime(g.at)})</span>
        </div>
      )}
      {editing ? (
        <div className="gr-form" data-testid="grade-form">
          {c.scale.length > 0 ? (
            <div className="row gap-xs" role="radiogroup" aria-label="Your grade on the scale" data-testid="grade-scale">
              {c.scale.map((l, i) => (
                <button
                  key={l.label}
                  type="button"
                  role="radio"
                  aria-checked={editing.level === l.label}
                  className={`btn btn-sm ${editing.level === l.label ? "btn-primary" : "btn-secondary"}`}
                  onClick={() => onChange({ ...editing, level: l.label, met: levelMet(c.points, l.points) })}
                  data-testid="grade-level"
                  data-level={l.label}
                >
                  {l.label} ({l.points}) {i < 9 && <kbd className="kbd">{i + 1}</kbd>}
                </button>
              ))}
            </div>
          ) : (
          <div className="row gap-xs" role="radiogroup" aria-label="Your grade">
            {[true, false].map((m) => (
              <button
                key={String(m)}
                type="button"
                role="radio"
                aria-checked={editing.met === m}
                className={`btn btn-sm ${editing.met === m ? "btn-primary" : "btn-secondary"}`}
                onClick={() => onChange({ ...editing, met: m })}
                data-testid={m ? "grade-met" : "grade-not-met"}
              >
                {m ? "Met" : "Not met"} <kbd className="kbd">{m ? "Y" : "N"}</kbd>
              </button>
            ))}
          </div>
          )}
          <label className="gr-reason">
            <span className="small muted">{c.judged ? "Why? (required)" : "Why is the automatic check wrong here? (required)"}</span>
            <textarea
              ref={reason}
              rows={2}
              value={editing.reason}
              onChange={(e) => onChange({ ...editing, reason: e.target.value })}
              onKeyDown={(e) => {
                if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
                  e.preventDefault();
                  onSave();
                } else if (e.key === "Escape") {
                  e.preventDefault();
                  e.stopPropagation();
                  onCancel();
                }
              }}
              data-testid="grade-reason"
            />
          </label>
          <div className="row gap-xs">
            <button
              type="button"
              className="btn btn-primary btn-sm"
              disabled={saving || editing.met === null || !editing.reason.trim() || (c.scale.length > 0 && !editing.level)}
              onClick={onSave}
              data-testid="save-grade"
            >
              {c.judged ? "Save grade" : "Save override"} <kbd className="kbd">Ctrl Enter</kbd>
            </button>
            <button type="button" className="btn btn-ghost btn-sm" onClick={onCancel}>
              Cancel <kbd className="kbd">Esc</kbd>
            </button>
          </div>
        </div>
      ) : (
        <div className="row gap-xs">
          <button
            type="button"
            className="btn btn-secondary btn-sm"
            onClick={() => onEdit(c.judged ? (g?.met ?? null) : !(g ? g.met : c.automatic))}
            data-testid={c.judged ? "grade" : "override"}
          >
            {c.judged ? (g ? "Change grade" : "Grade") : "Override…"} <kbd className="kbd">Enter</kbd>
          </button>
        </div>
      )}
    </li>
  );
}

/** One grader's sheet for one agent run. */
export function GradeRun({ episodeId, onBack }: { episodeId: string; onBack: () => void }) {
  const [view, setView] = useState<SheetView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [saving, setSaving] = useState(false);
  const [focus, setFocus] = useState(0);
  const list = useRef<HTMLOListElement | null>(null);
  // Signed in to a team hub: grades saved here are also sent to it.
  const hub = useHubWork();

  useEffect(() => {
    api
      .openGrading(episodeId)
      .then(setView)
      .catch((e) => setError(e as AppError));
  }, [episodeId]);

  const criteria = view ? [...view.sheet.criteria.filter((c) => c.judged), ...view.sheet.criteria.filter((c) => !c.judged)] : [];
  const edit = useCallback((c: SheetCriterion, met: boolean | null) => {
    const keep = c.grade && met === c.grade.met;
    setEditing({ id: c.id, met, reason: keep ? c.grade!.reason : "", level: keep ? (c.grade!.level ?? null) : null });
  }, []);

  const save = useCallback(async () => {
    if (!editing || editing.met === null || !editing.reason.trim()) return;
    setSaving(true);
    setError(null);
    try {
      setView(
        await api.gradeCriterion(episodeId, {
          criterion_id: editing.id,
          met: editing.met,
          reason: editing.reason.trim(),
          ...(editing.level ? { level: editing.level } : {}),
        }),
      );
      setEditing(null);
      void hub.refresh();
    } catch (e) {
      setError(e as AppError);
    } finally {
      setSaving(false);
    }
  }, [editing, episodeId, hub.refresh]);

  const finish = useCallback(async () => {
    setError(null);
    try {
      setView(await api.finishGrading(episodeId));
      void hub.refresh();
    } catch (e) {
      setError(e as AppError);
    }
  }, [episodeId, hub.refresh]);

  const moveTo = useCallback((i: number) => {
    const items = list.current?.querySelectorAll<HTMLElement>("[data-testid=criterion]");
    if (!items || items.length === 0) return;
    const n = Math.max(0, Math.min(items.length - 1, i));
    items[n]?.focus();
    setFocus(n);
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const inField = e.target instanceof HTMLElement && ["INPUT", "TEXTAREA", "SELECT"].includes(e.target.tagName);
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
        e.preventDefault();
        void finish();
        return;
      }
      if (inField) return;
      const c = criteria[focus];
      if (e.key === "Escape") {
        if (editing) setEditing(null);
        else onBack();
      } else if (e.key === "ArrowDown" || e.key === "j") {
        e.preventDefault();
        moveTo(focus + 1);
      } else if (e.key === "ArrowUp" || e.key === "k") {
        e.preventDefault();
        moveTo(focus - 1);
      } else if (c && c.scale.length > 0 && /^[1-9]$/.test(e.key) && c.scale[Number(e.key) - 1]) {
        // On a scale, a digit picks the level.
        e.preventDefault();
        const l = c.scale[Number(e.key) - 1]!;
        setEditing((was) => ({ id: c.id, reason: was?.id === c.id ? was.reason : (c.grade?.reason ?? ""), level: l.label, met: levelMet(c.points, l.points) }));
      } else if (c && (e.key === "y" || e.key === "n")) {
        e.preventDefault();
        edit(c, e.key === "y");
      } else if (c && e.key === "Enter" && !editing && e.target instanceof HTMLElement && e.target.dataset.testid === "criterion") {
        e.preventDefault();
        edit(c, c.judged ? (c.grade?.met ?? null) : !(c.grade ? c.grade.met : c.automatic));
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [criteria, focus, editing, edit, finish, moveTo, onBack]);

  if (!view) {
    return (
      <div className="center-screen" data-screen="grade-run">
        {error ? (
          <div className="stack">
            <ErrorBanner error={error} />
            <button type="button" className="btn btn-secondary btn-sm" onClick={onBack}>
              Back to the runs
            </button>
          </div>
        ) : (
          <span className="muted">Opening the run…</span>
        )}
      </div>
    );
  }

  const s = view.sheet;
  const highlighted = new Set(criteria[focus]?.evidence.steps ?? []);
  const judged = criteria.filter((c) => c.judged);
  const left = judged.filter((c) => !c.grade).length;
  const renderCard = (c: SheetCriterion) => {
    const i = criteria.indexOf(c);
    return (
      <CriterionCard
        key={c.id}
        c={c}
        editing={editing?.id === c.id ? editing : null}
        onEdit={(met) => edit(c, met)}
        onChange={setEditing}
        onSave={() => void save()}
        onCancel={() => setEditing(null)}
        saving={saving}
        focused={i === focus}
        onFocus={() => setFocus(i)}
        labels={view}
      />
    );
  };
  return (
    <div className="home gr-run" data-screen="grade-run">
      <ScreenBar sub={`Grading · ${view.run.task_title}`}>
        <span className="muted small">Agent: {view.run.model}</span>
        <button type="button" className="btn btn-ghost btn-sm" onClick={onBack} data-testid="back-to-runs">
          Back to the runs <kbd className="kbd">Esc</kbd>
        </button>
      </ScreenBar>
      <main className="gr-run-main">
        <aside className="card gr-steps" aria-labelledby="steps-title">
          <h2 id="steps-title" className="section-title">
            What the agent did
          </h2>
          {view.task && <p className="small muted">{view.task.instruction}</p>}
          <ol className="gr-step-list">
            {view.steps.map((st, i) => (
              <li key={st.idx} className={highlighted.has(i) ? "gr-step-hit" : undefined} data-testid="run-step">
                <span className="gr-step-n">{i + 1}</span>
                <div>
                  <div className={isMessage(st.action) ? "gr-step-message" : "gr-step-tool"}>{stepLine(st, view)}</div>
                  {!st.ok && <div className="small gr-tone-red">Refused: {st.text}</div>}
                  {st.ok && !isMessage(st.action) && (st.text || resultLine(st)) && (
                    <div className="small muted gr-step-result">{st.text || resultLine(st)}</div>
                  )}
                  {isMessage(st.action) && st.text && <div className="small muted gr-step-result">Customer: {st.text}</div>}
                </div>
              </li>
            ))}
          </ol>
          {view.final_message && <p className="small">Final answer: {view.final_message}</p>}
        </aside>
        <section className="card gr-sheet" aria-labelledby="sheet-title">
          <header className="gr-sheet-head">
            <div>
              <h2 id="sheet-title" className="section-title">
                Your grades
              </h2>
              <p className="small muted">
                Move with ↑ ↓, grade with Y (met) or N (not met), save with Ctrl Enter.
              </p>
              <HubScreenNote view={hub.view} what="Your grades" prefix={`grades:${episodeId}`} />
            </div>
            <div className="gr-scores">
              <div>
                <span className="small muted">Automatic score</span>
                <strong data-testid="automatic-score">{scoreText(s.automatic.value, s.automatic.range)}</strong>
              </div>
              <div>
                <span className="small muted">With your grades</span>
                <strong data-testid="graded-score">{scoreText(s.graded.value, s.graded.range)}</strong>
              </div>
            </div>
          </header>
          {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
          <ol className="gr-criteria" ref={list}>
            {judged.length > 0 && <li className="gr-group-title">Needs your judgement</li>}
            {judged.map(renderCard)}
            <li className="gr-group-title">Checked automatically — override a check you disagree with</li>
            {criteria.filter((c) => !c.judged).map(renderCard)}
          </ol>
          <footer className="gr-sheet-foot">
            <HubWorkNote view={hub.view} workKey={`grades:${episodeId}`} />
            {s.done ? (
              <span className="chip chip-green" data-testid="grading-done">
                You finished grading this run
              </span>
            ) : (
              <span className="small muted">{left > 0 ? `${left} criterion${left === 1 ? "" : "s"} still need${left === 1 ? "s" : ""} your grade.` : "Everything is graded."}</span>
            )}
            {!s.done && (
              <button type="button" className="btn btn-primary btn-sm" onClick={() => void finish()} data-testid="finish-grading">
                Finish grading <kbd className="kbd">Ctrl S</kbd>
              </button>
            )}
          </footer>
        </section>
      </main>
    </div>
  );
}
