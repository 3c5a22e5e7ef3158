import type { TaskBrief } from "../bindings/TaskBrief";

/**
 * The task brief: only what the performer would have (the ticket comes with
 * the customer's message). What the customer knows is learned by asking.
 */
export function Brief({ task }: { task: TaskBrief }) {
  return (
    <section className="panel brief" aria-labelledby="brief-title" data-testid="brief">
      <header className="panel-header">
        <h2 id="brief-title" className="panel-title">
          Your task
        </h2>
        {task.difficulty && <span className={`chip chip-outline diff-${task.difficulty}`}>{task.difficulty}</span>}
      </header>
      <div className="brief-body">
        <p className="brief-instruction">{task.instruction}</p>
      </div>
    </section>
  );
}
