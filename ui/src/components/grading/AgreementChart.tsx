import { useEffect, useRef } from "react";
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from "chart.js";
import type { CriterionAgreement } from "../../bindings/CriterionAgreement";
import { methodName, strength, tone } from "../../lib/agreement";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

const COLOURS = { grey: "#cbd1d9", red: "#b42318", amber: "#dc8a0b", green: "#067647" } as const;

/** Shortens a criterion's words to fit a chart label. */
function label(text: string): string {
  return text.length > 48 ? `${text.slice(0, 45)}…` : text;
}

/**
 * One horizontal bar per criterion, from −1 to 1: where graders disagree
 * stands out at a glance (the table beside it has the numbers).
 */
export function AgreementChart({ criteria }: { criteria: CriterionAgreement[] }) {
  const canvas = useRef<HTMLCanvasElement | null>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const values = criteria.map((c) => c.agreement.value);
    const chart = new Chart(canvas.current, {
      type: "bar",
      data: {
        labels: criteria.map((c) => label(c.description)),
        datasets: [
          {
            data: values.map((v) => v ?? 0),
            backgroundColor: values.map((v) => COLOURS[tone(v)]),
            borderRadius: 3,
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
          x: { min: -1, max: 1, ticks: { stepSize: 0.5 }, grid: { color: "#e2e5ea" } },
          y: { ticks: { font: { size: 11 } }, grid: { display: false } },
        },
        plugins: {
          tooltip: {
            callbacks: {
              label: (item) => {
                const c = criteria[item.dataIndex];
                if (!c) return "";
                const a = c.agreement;
                return a.value === null
                  ? (a.note ?? "Not enough grades yet")
                  : `${methodName(a.method)} ${a.value.toFixed(2)} (${strength(a.value)}), ${a.items} run(s)`;
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
        aria-label="Agreement per criterion, from −1 (always opposite) to 1 (always the same)"
        data-testid="agreement-chart"
      />
    </div>
  );
}
