import { useState } from "react";
import type { TaskBrief } from "../bindings/TaskBrief";

/** The task brief and what the customer knows. */
export function Brief({ task }: { task: TaskBrief }) {
  const [showFacts, setShowFacts] = useState(true);
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
        {task.facts.length > 0 && (
          <div className="facts">
            <button
              type="button"
              className="disclosure"
              aria-expanded={showFacts}
              onClick={() => setShowFacts(!showFacts)}
            >
              <span className="disclosure-icon" aria-hidden="true">
                {showFacts ? "▾" : "▸"}
              </span>
              What the customer can tell you when asked
            </button>
            {showFacts && (
              <ul className="fact-list">
                {task.facts.map((f) => (
                  <li key={f}>{f}</li>
                ))}
              </ul>
            )}
          </div>
        )}
      </div>
    </section>
  );
}
