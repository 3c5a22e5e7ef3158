import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { listen } from "@tauri-apps/api/event";
import { save } from "@tauri-apps/plugin-dialog";
import { api } from "../../api";
import type { AppError } from "../../bindings/AppError";
import type { ExportChoices } from "../../bindings/ExportChoices";
import type { ExportDone } from "../../bindings/ExportDone";
import type { ExportProgressEvent } from "../../bindings/ExportProgressEvent";
import type { ExportRequest } from "../../bindings/ExportRequest";
import type { Format } from "../../bindings/Format";
import { plural } from "../../lib/format";
import { ErrorBanner } from "../ErrorBanner";
import { Modal } from "../Modal";

let jobs = 0;

/** The filters as the dialog keeps them: "" is "any". */
export interface ExportForm {
  format: Format;
  world: string;
  /** `world/task`, so a task id shared by two worlds stays apart. */
  task: string;
  status: string;
  expert: string;
  since: string;
  until: string;
  includeUndone: boolean;
  destination: string;
}

/** Gold only, by default: what reviewers approved is what trains. */
export const FIRST_FORM: ExportForm = {
  format: "trl",
  world: "",
  task: "",
  status: "approved",
  expert: "",
  since: "",
  until: "",
  includeUndone: false,
  destination: "",
};

/** The engine's request for the dialog's form. */
export function requestOf(f: ExportForm): ExportRequest {
  const blank = (v: string) => (v.trim() === "" ? null : v.trim());
  const [world, task] = f.task ? f.task.split("/") : [f.world, ""];
  return {
    format: f.format,
    world: blank(world ?? ""),
    task: blank(task ?? ""),
    status: blank(f.status),
    expert: blank(f.expert),
    since: blank(f.since),
    until: blank(f.until),
    include_retracted: f.format !== "native" && f.includeUndone,
    rows_per_file: null,
  };
}

/** "12 of 40 recordings" done, as a share for the bar (0 when nothing to do). */
export function share(done: number, total: number): number {
  return total === 0 ? 1 : Math.min(1, done / total);
}

/** What the export wrote: where, how much, and what to know. */
export function ExportResult({ done }: { done: ExportDone }) {
  return (
    <div className="banner banner-info ex-result" role="status" data-testid="export-done">
      <div className="banner-body">
        <strong>
          Exported {plural(done.episodes, "recording")} ({plural(done.steps, "step")})
        </strong>{" "}
        to <code data-testid="export-path">{done.path}</code>
        {done.files.length > 1 && <div className="small muted">{plural(done.files.length, "file")} in the folder.</div>}
        {done.episodes === 0 && <div className="small">No recording matched the filters, so the export is empty.</div>}
        {done.warnings.map((w) => (
          <div key={w} className="small muted" data-testid="export-warning">
            {w}
          </div>
        ))}
      </div>
    </div>
  );
}

/**
 * The export dialog: a format, filters (world, task, status, expert,
 * dates), where to save (the system's save dialog, or typed), then a
 * progress bar and the result's location and counts.
 */
export function ExportDialog({ onClose, initial = FIRST_FORM }: { onClose: () => void; initial?: ExportForm }) {
  const [choices, setChoices] = useState<ExportChoices | null>(null);
  const [form, setForm] = useState<ExportForm>(initial);
  const [matching, setMatching] = useState<number | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [running, setRunning] = useState(false);
  const [done, setDone] = useState<ExportDone | null>(null);
  const destinationRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    api.exportChoices().then(setChoices, (e) => setError(e as AppError));
  }, []);

  const request = useMemo(() => requestOf(form), [form]);
  useEffect(() => {
    let current = true;
    api.exportCount(request).then(
      (n) => current && setMatching(n),
      () => current && setMatching(null),
    );
    return () => {
      current = false;
    };
  }, [request]);

  const set = <K extends keyof ExportForm>(key: K, value: ExportForm[K]) => {
    setDone(null);
    setForm((f) => ({ ...f, [key]: value }));
  };
  const format = choices?.formats.find((f) => f.format === form.format);
  const tasks = (choices?.tasks ?? []).filter((t) => !form.world || t.world_id === form.world);

  const choose = async () => {
    setError(null);
    try {
      const path = await save({
        title: format?.folder ? "Save the dataset folder as" : "Save the export as",
        defaultPath: form.destination || format?.suggested_name,
        filters: format?.folder ? [] : [{ name: "JSON lines", extensions: ["jsonl"] }],
      });
      if (typeof path === "string") set("destination", path);
    } catch (e) {
      setError({ code: "dialog", message: `The save dialog did not open (${String(e)}). Type the location instead.` });
    }
    destinationRef.current?.focus();
  };

  const run = useCallback(async () => {
    if (running) return;
    setError(null);
    setDone(null);
    const job = `export-${++jobs}`;
    setRunning(true);
    setProgress(null);
    const stop = await listen<ExportProgressEvent>("export-progress", (e) => {
      if (e.payload.job === job) setProgress({ done: e.payload.done, total: e.payload.total });
    }).catch(() => () => undefined);
    try {
      const result = await api.exportDataset(request, form.destination, job);
      setProgress({ done: result.episodes + result.left_out, total: result.episodes + result.left_out });
      setDone(result);
    } catch (e) {
      setError(e as AppError);
    } finally {
      stop();
      setRunning(false);
    }
  }, [running, request, form.destination]);

  const canRun = !running && form.destination.trim() !== "";
  const footer = (
    <>
      <span className="muted small ex-count" data-testid="export-count">
        {matching === null ? "" : `${plural(matching, "recording")} match${matching === 1 ? "es" : ""}`}
      </span>
      <button type="button" className="btn btn-ghost" onClick={onClose}>
        {done ? "Close" : "Cancel"}
      </button>
      <button type="button" className="btn btn-primary" onClick={() => void run()} disabled={!canRun} data-testid="export-run">
        {running ? "Exporting…" : "Export"} <kbd className="kbd">Ctrl Enter</kbd>
      </button>
    </>
  );
  return (
    <Modal title="Export a dataset" onClose={onClose} onConfirm={canRun ? () => void run() : undefined} footer={footer} width={760} testId="export-dialog">
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <fieldset className="ex-formats">
        <legend className="field-label">Format</legend>
        {(choices?.formats ?? []).map((f) => (
          <label key={f.format} className={`ex-format ${form.format === f.format ? "ex-format-on" : ""}`}>
            <input
              type="radio"
              name="export-format"
              value={f.format}
              checked={form.format === f.format}
              onChange={() => set("format", f.format)}
              data-testid={`export-format-${f.format}`}
              data-autofocus={form.format === f.format ? true : undefined}
            />
            <span>
              <strong>{f.label}</strong>
              <span className="small muted ex-format-text">{f.description}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <div className="ex-filters">
        <label className="field">
          <span className="field-label">Recordings</span>
          <select value={form.status} onChange={(e) => set("status", e.target.value)} data-testid="export-status">
            <option value="">Any status</option>
            {(choices?.statuses ?? []).map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">World</span>
          <select
            value={form.world}
            onChange={(e) => {
              setDone(null);
              setForm((f) => ({ ...f, world: e.target.value, task: "" }));
            }}
            data-testid="export-world"
          >
            <option value="">Every world</option>
            {(choices?.worlds ?? []).map((w) => (
              <option key={w.value} value={w.value}>
                {w.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">Task</span>
          <select value={form.task} onChange={(e) => set("task", e.target.value)} data-testid="export-task">
            <option value="">Every task</option>
            {tasks.map((t) => (
              <option key={`${t.world_id}/${t.task_id}`} value={`${t.world_id}/${t.task_id}`}>
                {t.title}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">Expert</span>
          <select value={form.expert} onChange={(e) => set("expert", e.target.value)} data-testid="export-expert">
            <option value="">Every expert (and agents)</option>
            {(choices?.experts ?? []).map((x) => (
              <option key={x.value} value={x.value}>
                {x.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">
            From <span className="opt">optional</span>
          </span>
          <input type="date" value={form.since} onChange={(e) => set("since", e.target.value)} data-testid="export-since" />
        </label>
        <label className="field">
          <span className="field-label">
            To (included) <span className="opt">optional</span>
          </span>
          <input type="date" value={form.until} onChange={(e) => set("until", e.target.value)} data-testid="export-until" />
        </label>
      </div>
      {form.format !== "native" && (
        <label className="check small">
          <input type="checkbox" checked={form.includeUndone} onChange={(e) => set("includeUndone", e.target.checked)} data-testid="export-undone" />
          Include the steps experts undid (left out by default: they are not what the expert meant to do)
        </label>
      )}
      <div className="field ex-destination">
        <label className="field-label" htmlFor="export-destination">
          Save to
        </label>
        <div className="row gap-sm">
          <input
            id="export-destination"
            ref={destinationRef}
            value={form.destination}
            onChange={(e) => set("destination", e.target.value)}
            placeholder={format?.folder ? "A new folder, e.g. /home/you/understudy-dataset" : "A file, e.g. /home/you/understudy-trl.jsonl"}
            spellCheck={false}
            data-testid="export-destination"
          />
          <button type="button" className="btn btn-secondary" onClick={() => void choose()} data-testid="export-choose">
            Choose…
          </button>
        </div>
      </div>
      {(running || progress) && !done && (
        <div className="ex-progress" data-testid="export-progress">
          <div
            className="ex-bar"
            role="progressbar"
            aria-label="Export progress"
            aria-valuemin={0}
            aria-valuemax={progress?.total ?? 0}
            aria-valuenow={progress?.done ?? 0}
          >
            <div className="ex-bar-fill" style={{ width: `${progress ? Math.round(share(progress.done, progress.total) * 100) : 0}%` }} />
          </div>
          <span className="small muted">
            {progress ? `${progress.done} of ${plural(progress.total, "recording")}` : "Finding the recordings…"}
          </span>
        </div>
      )}
      {done && <ExportResult done={done} />}
    </Modal>
  );
}
