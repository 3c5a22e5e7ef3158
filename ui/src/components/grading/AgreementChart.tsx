import { useEffect, useRef } from "react";
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from "chart.js";
import type { CriterionAgreement } from "../../bindings/CriterionAgreement";
import { methodName, strength } from "../../lib/agreement";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

const COLOURS = { grey: "#cbd1d9", red: "#b42318", amber: "#dc8a0b", green: "#067647" } as const;

/** Green when graders nearly always agree, amber sometimes, red often not. */
function colour(share: number | null): string {
  if (share === null) return COLOURS.grey;
  if (share >= 0.8) return COLOURS.green;
  if (share >= 0.6) return COLOURS.amber;
  return COLOURS.red;
}

/** Shortens a criterion's words to fit a chart label. */
function label(text: string): string {
  return text.length > 48 ? `${text.slice(0, 45)}…` : text;
}

/**
 * One horizontal bar per criterion: how often its graders gave the same
 * grade, so the criteria they disagree on stand out at a glance. The
 * chance-corrected κ or α is in the tooltip and the table below (with
 * few runs it is often not measurable, while the share always is).
 */
export function AgreementChart({ criteria }: { criteria: CriterionAgreement[] }) {
  const canvas = useRef<HTMLCanvasElement | null>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const shares = criteria.map((c) => c.agreement.percent);
    const chart = new Chart(canvas.current, {
      type: "bar",
      data: {
        labels: criteria.map((c) => label(c.description)),
        datasets: [
          {
            data: shares.map((v) => (v ?? 0) * 100),
            backgroundColor: shares.map(colour),
            borderRadius: 3,
            // A criterion nobody agreed on still shows as a sliver of red.
            minBarLength: 4,
            barThickness: 14,
          },
        ],
      },
      options: {
        indexAxis: "y",
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: {
            min: 0,
            max: 100,
            ticks: { stepSize: 25, callback: (v) => `${v}%` },
            title: { display: true, text: "Graders gave the same grade" },
            grid: { color: "#e2e5ea" },
          },
          y: { ticks: { font: { size: 11 } }, grid: { display: false } },
        },
        plugins: {
          tooltip: {
            callbacks: {
              label: (item) => {
                const c = criteria[item.dataIndex];
                if (!c) return "";
                const a = c.agreement;
                const same = a.percent === null ? "no run graded twice" : `same grade ${Math.round(a.percent * 100)}%`;
                return a.value === null
                  ? `${same}; ${a.note ?? "not enough grades yet"}`
                  : `${same}; ${methodName(a.method)} ${a.value.toFixed(2)} (${strength(a.value)}) over ${a.items} run(s)`;
              },
            },
          },
        },
      },
    });
    return () => chart.destroy();
  }, [criteria]);
  return (
    <div className="gr-chart" style={{ height: `${Math.max(120, criteria.length * 26 + 40)}px` }}>
      <canvas
        ref={canvas}
        role="img"
        aria-label="How often the graders gave the same grade, per criterion"
        data-testid="agreement-chart"
      />
    </div>
  );
}
