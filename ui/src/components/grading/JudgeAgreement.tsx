import type { JudgeAgreement } from "../../bindings/JudgeAgreement";
import type { JudgeCriterionAgreement } from "../../bindings/JudgeCriterionAgreement";
import { strength, tone } from "../../lib/agreement";
import { plural } from "../../lib/format";

/** "command:my-judge" → "my-judge": the judge program's name. */
export function judgeName(grader: string): string {
  return grader.startsWith("command:") ? grader.slice("command:".length) : grader;
}

/** "Agreed on 3 of 4 grades (75%)", or why there is nothing to compare. */
export function agreedText(c: JudgeCriterionAgreement): string {
  if (c.items === 0 || c.percent === null) return c.note ?? "Nothing to compare yet.";
  return `Agreed on ${c.agreed} of ${plural(c.items, "grade")} (${Math.round(c.percent * 100)}%)`;
}

/** κ in words, or a dash with the reason on hover. */
function KappaCell({ c }: { c: JudgeCriterionAgreement }) {
  if (c.kappa === null) {
    return (
      <span className="muted" title={c.note ?? undefined}>
        —
      </span>
    );
  }
  return (
    <>
      {c.kappa.toFixed(2)} ({strength(c.kappa)})
    </>
  );
}

/**
 * A judge plug-in against the people who graded the same judged criteria:
 * per criterion, how often they agree, with counts and Cohen's κ. Shows
 * nothing when no judge graded any run.
 */
export function JudgeAgreementPanel({ judge, testId = "judge-agreement" }: { judge: JudgeAgreement; testId?: string }) {
  const judged = judge.criteria.filter((c) => c.judged_runs > 0);
  if (judged.length === 0) return null;
  const names = [...new Set(judged.flatMap((c) => c.judges))].map(judgeName);
  return (
    <section className="ju-panel" data-testid={testId} aria-labelledby={`${testId}-title`}>
      <h3 id={`${testId}-title`} className="ju-title">
        Does the judge agree with people?
      </h3>
      <p className="small muted">
        {names.length > 0 ? `Judge: ${names.join(", ")}. ` : ""}Each person's grade of a run the judge graded too counts once. Cohen's κ
        corrects for agreeing by chance: 1 always agrees, 0 is chance.
      </p>
      <table className="gr-table ju-table">
        <thead>
          <tr>
            <th>Judged criterion</th>
            <th>Same grade</th>
            <th>κ</th>
          </tr>
        </thead>
        <tbody>
          {judged.map((c) => (
            <tr key={c.id} data-criterion={c.id} data-testid="judge-row">
              <td>
                {c.description}
                <div className="small muted">
                  The judge graded {plural(c.judged_runs, "run")}; people graded {plural(c.graded_runs, "run")}.
                  {c.disagreements.length > 0 &&
                    ` They differ on ${plural(new Set(c.disagreements.map((d) => d.episode_id)).size, "run")}.`}
                </div>
              </td>
              <td data-testid="judge-agreed">{agreedText(c)}</td>
              <td className={`gr-tone-${tone(c.kappa)}`} data-testid="judge-kappa">
                <KappaCell c={c} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
