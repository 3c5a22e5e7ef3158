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

/** How often the judge said one thing and a person another. */
export interface DisagreementGroup {
  /** What the judge said: the level's words, or "met" / "not met". */
  judge: string;
  /** What the person said, the same way. */
  person: string;
  /** How many grades said so. */
  count: number;
}

function said(met: boolean, level: string | null): string {
  return level !== null ? `“${level}”` : met ? "met" : "not met";
}

/** The disagreements grouped by what each side said, most common first. */
export function disagreementGroups(c: JudgeCriterionAgreement): DisagreementGroup[] {
  const groups = new Map<string, DisagreementGroup>();
  for (const d of c.disagreements) {
    const judge = said(d.judge_met, d.judge_level);
    const person = said(d.grader_met, d.grader_level);
    const key = `${judge}\u0000${person}`;
    const g = groups.get(key) ?? { judge, person, count: 0 };
    g.count += 1;
    groups.set(key, g);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.judge.localeCompare(b.judge) || a.person.localeCompare(b.person));
}

/**
 * Where the judge and people part ways on one criterion, as bars: which
 * way the judge leans (too lenient, too strict, or off by a level) is
 * what someone tuning it needs to see.
 */
function Disagreements({ c }: { c: JudgeCriterionAgreement }) {
  const groups = disagreementGroups(c);
  if (groups.length === 0) return null;
  const most = groups[0]!.count;
  return (
    <ul className="ju-differ" data-testid="judge-differences" aria-label={`Where the judge and people differ on: ${c.description}`}>
      {groups.map((g) => (
        <li key={`${g.judge}-${g.person}`} data-testid="judge-difference">
          <span className="ju-differ-text">
            The judge said {g.judge}, a person said {g.person}
          </span>
          <span className="ju-differ-bar" aria-hidden="true">
            <span style={{ width: `${Math.max(8, (g.count / most) * 100)}%` }} />
          </span>
          <span className="ju-differ-count">{plural(g.count, "grade")}</span>
        </li>
      ))}
    </ul>
  );
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
                <Disagreements c={c} />
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
