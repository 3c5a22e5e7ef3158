import type { AssignmentView } from "../../bindings/AssignmentView";
import type { Catalog } from "../../bindings/Catalog";
import type { TaskSummary } from "../../bindings/TaskSummary";
import { dateTime, plural } from "../../lib/format";
import { assignmentNote } from "../../lib/hub";

/** The tasks the hub assigned to the expert, with the way to start each. */
export function Assignments({
  assignments,
  catalog,
  disabled,
  starting,
  onStart,
}: {
  assignments: AssignmentView[];
  catalog: Catalog | null;
  disabled: boolean;
  starting: string | null;
  onStart: (worldId: string, task: TaskSummary) => void;
}) {
  if (assignments.length === 0) return null;
  return (
    <section className="section hub-assignments" aria-labelledby="assigned-title" data-testid="hub-assignments">
      <h2 id="assigned-title" className="section-title">
        Assigned to you
      </h2>
      <ul className="resume-list">
        {assignments.map((a) => {
          const world = catalog?.worlds.find((w) => w.id === a.world_id);
          const task = world?.tasks.find((t) => t.id === a.task_id);
          const note = assignmentNote(a.here, a.world_id);
          const open = task?.progress.open_episode;
          const done = (task?.progress.submitted ?? 0) > 0;
          return (
            <li key={a.id} className="card resume-item" data-assignment={a.task_id}>
              <div className="resume-text">
                <div className="resume-title">{task?.title ?? a.task_id}</div>
                <div className="muted small">
                  {world?.name ?? a.world_id}
                  {a.due_at && ` · due ${dateTime(a.due_at)}`}
                  {a.overlap > 1 && ` · also given to ${plural(a.overlap - 1, "other expert")}`}
                </div>
                {note && <div className="small hub-note">{note}</div>}
              </div>
              <span className={`chip chip-${open ? "amber" : done ? "green" : "grey"}`}>
                {open ? "In progress" : done ? "Done" : "Not started"}
              </span>
              <button
                type="button"
                className={`btn ${open ? "btn-primary" : "btn-secondary"}`}
                disabled={disabled || !task || note !== null || starting !== null}
                onClick={() => task && world && onStart(world.id, task)}
                aria-label={`${open ? "Resume" : "Start"} assignment: ${task?.title ?? a.task_id}`}
              >
                {starting === `${a.world_id}/${a.task_id}` ? "Opening…" : open ? "Resume" : done ? "Do again" : "Start"}
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
