import { useCallback, useEffect, useMemo, useState } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { Decision } from "../bindings/Decision";
import type { EpisodeStatus } from "../bindings/EpisodeStatus";
import type { QueueRow } from "../bindings/QueueRow";
import type { QueueView } from "../bindings/QueueView";
import type { ConsensusView } from "../bindings/ConsensusView";
import { ConsensusPanel } from "../components/ConsensusPanel";
import { DecisionDialog } from "../components/DecisionDialog";
import { ActingAs, ScreenBar } from "../components/ScreenBar";
import { ErrorBanner } from "../components/ErrorBanner";
import { HubScreenNote, HubWorkNote, useHubWork } from "../components/hub/HubWork";
import { dateTime, duration, plural } from "../lib/format";

type StatusFilter = "submitted" | "approved" | "rejected" | "all";

const STATUS_LABEL: Record<string, { text: string; tone: string }> = {
  submitted: { text: "Waiting for review", tone: "blue" },
  approved: { text: "Approved", tone: "green" },
  rejected: { text: "Returned", tone: "red" },
};

export function statusChip(status: EpisodeStatus) {
  const s = STATUS_LABEL[status] ?? { text: status, tone: "grey" };
  return <span className={`chip chip-${s.tone}`}>{s.text}</span>;
}

/** Why a row's decision buttons are off, or null when the reviewer may decide. */
export function cannotDecide(row: QueueRow, reviewing: boolean): string | null {
  if (!reviewing) return "Choose your profile on the start screen to review.";
  if (row.own) return "You recorded this; another expert reviews it.";
  return null;
}

/** The decision buttons of one recording, or why there are none. */
export function DecisionButtons({
  row,
  reviewing,
  onDecide,
}: {
  row: QueueRow;
  reviewing: boolean;
  onDecide: (row: QueueRow, decision: Decision) => void;
}) {
  if (row.status !== "submitted") return null;
  const why = cannotDecide(row, reviewing);
  if (why) return <span className="muted small queue-why">{why}</span>;
  return (
    <>
      <button
        type="button"
        className="btn btn-secondary btn-sm"
        onClick={() => onDecide(row, "approve")}
        data-testid="approve"
        aria-label={`Approve: ${row.task_title} by ${row.performer}`}
      >
        Approve
      </button>
      <button
        type="button"
        className="btn btn-ghost btn-sm"
        onClick={() => onDecide(row, "reject")}
        data-testid="reject"
        aria-label={`Return: ${row.task_title} by ${row.performer}`}
      >
        Return…
      </button>
    </>
  );
}

/** One of the queue's filters: a labelled list of `[value, label]` choices. */
function Filter({
  label,
  testId,
  value,
  onChange,
  options,
}: {
  label: string;
  testId: string;
  value: string;
  onChange: (value: string) => void;
  options: [string, string][];
}) {
  return (
    <label className="queue-filter">
      <span className="small muted">{label}</span>
      <select className="select-sm" value={value} onChange={(e) => onChange(e.target.value)} data-testid={testId}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The reviewer's list: handed-in recordings by task, with their status. */
export function ReviewQueue({ onHome, onReplay }: { onHome: () => void; onReplay: (episodeId: string) => void }) {
  const [view, setView] = useState<QueueView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [status, setStatus] = useState<StatusFilter>("submitted");
  const [task, setTask] = useState("");
  const [expert, setExpert] = useState("");
  const [deciding, setDeciding] = useState<{ row: QueueRow; decision: Decision } | null>(null);
  const [consensus, setConsensus] = useState<{ key: string; view: ConsensusView } | null>(null);
  const compare = async (worldId: string, taskId: string) => {
    try {
      setConsensus({ key: `${worldId}/${taskId}`, view: await api.taskConsensus(worldId, taskId) });
    } catch (e) {
      setError(e as AppError);
    }
  };

  const refresh = useCallback(async () => {
    try {
      setView(await api.reviewQueue());
    } catch (e) {
      setError(e as AppError);
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  // Signed in to a team hub: the queue lists its episodes, decisions go to it.
  const hub = useHubWork(() => void refresh());

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !deciding) onHome();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [deciding, onHome]);

  const rows = view?.rows ?? [];
  const tasks = useMemo(() => {
    const seen = new Map<string, string>();
    for (const r of rows) seen.set(`${r.world_id}/${r.task_id}`, r.task_title);
    return [...seen.entries()];
  }, [rows]);
  const experts = useMemo(() => {
    const seen = new Map<string, string>();
    for (const r of rows) seen.set(r.performer_id, r.performer);
    return [...seen.entries()];
  }, [rows]);
  const shown = rows.filter(
    (r) =>
      (status === "all" || r.status === status) &&
      (!task || `${r.world_id}/${r.task_id}` === task) &&
      (!expert || r.performer_id === expert),
  );
  const groups = new Map<string, QueueRow[]>();
  for (const r of shown) {
    const key = `${r.world_id}/${r.task_id}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const waiting = rows.filter((r) => r.status === "submitted").length;
  const reviewing = !!view?.reviewer;

  return (
    <div className="home queue" data-screen="queue">
      <ScreenBar sub="Review">
        <ActingAs role="Reviewing" name={view?.reviewer?.name} testId="reviewer" none="No profile chosen" onHome={onHome} />
      </ScreenBar>
      <main className="queue-main">
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        <section className="card queue-card" aria-labelledby="queue-title">
          <header className="picker-header queue-header">
            <div>
              <h2 id="queue-title" className="section-title">
                Recordings to review
              </h2>
              <p className="muted small">
                {view ? `${plural(waiting, "recording")} waiting for review` : "Loading…"}
              </p>
              <HubScreenNote view={hub.view} what="Your decisions" prefix="review:" />
            </div>
            <div className="row gap-sm wrap queue-filters">
              <Filter
                label="Status"
                testId="filter-status"
                value={status}
                onChange={(v) => setStatus(v as StatusFilter)}
                options={[
                  ["submitted", "Waiting for review"],
                  ["approved", "Approved"],
                  ["rejected", "Returned"],
                  ["all", "All"],
                ]}
              />
              <Filter label="Task" testId="filter-task" value={task} onChange={setTask} options={[["", "All tasks"], ...tasks]} />
              <Filter
                label="Recorded by"
                testId="filter-expert"
                value={expert}
                onChange={setExpert}
                options={[["", "Anyone"], ...experts]}
              />
            </div>
          </header>
          <div className="queue-body">
            {view && shown.length === 0 && (
              <p className="muted pad" data-testid="queue-empty">
                {rows.length === 0 ? "Nothing has been handed in yet." : "No recording matches these filters."}
              </p>
            )}
            {[...groups.entries()].map(([key, group]) => (
              <section key={key} className="queue-group" data-group={key}>
                <h3 className="queue-group-title cs-group-title">
                  <span>
                    {group[0]?.task_title} <span className="muted small">{group[0]?.world_name} · {plural(group.length, "recording")}</span>
                  </span>
                  {rows.filter(
                    (r) => `${r.world_id}/${r.task_id}` === key && !r.is_agent && (r.status === "submitted" || r.status === "approved"),
                  ).length >= 2 && (
                    <button
                      type="button"
                      className="btn btn-ghost btn-sm"
                      onClick={() => void compare(group[0]!.world_id, group[0]!.task_id)}
                      data-testid="open-consensus"
                    >
                      Where do the experts differ?
                    </button>
                  )}
                </h3>
                {consensus?.key === key && <ConsensusPanel view={consensus.view} onClose={() => setConsensus(null)} />}
                <ul className="queue-list">
                  {group.map((r) => (
                    <li key={r.episode_id} className="queue-row" data-testid="queue-row" data-episode={r.episode_id} data-status={r.status}>
                      <div className="queue-text">
                        <div className="queue-who">
                          {r.performer}
                          {r.own && <span className="chip chip-xs chip-outline">You</span>}
                        </div>
                        <div className="muted small">
                          {r.submitted_at ? `Handed in ${dateTime(r.submitted_at)}` : "Handed in"} · {plural(r.steps, "action")} ·{" "}
                          {duration(r.active_ms)} worked
                        </div>
                        {r.last_review && (
                          <div className="small queue-review" data-testid="last-review">
                            {r.last_review.decision === "approve" ? "Approved" : "Returned"} by {r.last_review.reviewer}
                            {r.last_review.comment && <>: “{r.last_review.comment}”</>}
                          </div>
                        )}
                        <HubWorkNote view={hub.view} workKey={`review:${r.episode_id}`} />
                      </div>
                      {statusChip(r.status)}
                      <div className="row gap-xs queue-actions">
                        <button
                          type="button"
                          className="btn btn-secondary btn-sm"
                          onClick={() => onReplay(r.episode_id)}
                          data-testid="open-replay"
                          aria-label={`Replay: ${r.task_title} by ${r.performer}`}
                        >
                          Replay
                        </button>
                        <DecisionButtons row={r} reviewing={reviewing} onDecide={(row, decision) => setDeciding({ row, decision })} />
                      </div>
                    </li>
                  ))}
                </ul>
              </section>
            ))}
          </div>
        </section>
      </main>
      {deciding && (
        <DecisionDialog
          row={deciding.row}
          decision={deciding.decision}
          onClose={() => setDeciding(null)}
          onDecide={async (comment) => {
            await api.decideEpisode(deciding.row.episode_id, deciding.decision, comment);
            setDeciding(null);
            await refresh();
            await hub.refresh();
          }}
        />
      )}
    </div>
  );
}
