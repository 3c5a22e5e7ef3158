import type { TaskSummary } from "../bindings/TaskSummary";
import type { WorldSummary } from "../bindings/WorldSummary";

/** Where an expert stands in a world after finishing a task. */
export interface WorldProgress {
  /** Tasks with at least one submitted episode. */
  done: number;
  total: number;
  /** The next task still to do, after `current` in the world's order (wrapping); null when all are done. */
  next: TaskSummary | null;
}

/** The expert's progress in `world`, and what to do after `current`. */
export function worldProgress(world: WorldSummary, current: string): WorldProgress {
  const tasks = world.tasks;
  const done = tasks.filter((t) => t.progress.submitted > 0).length;
  const at = tasks.findIndex((t) => t.id === current);
  const order = at < 0 ? tasks : [...tasks.slice(at + 1), ...tasks.slice(0, at)];
  const next = order.find((t) => t.progress.submitted === 0 && t.id !== current) ?? null;
  return { done, total: tasks.length, next };
}
