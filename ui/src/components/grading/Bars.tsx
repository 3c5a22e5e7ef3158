import { useEffect, useRef } from "react";
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

/** One set of bars, e.g. the experts' runs. */
export interface Series {
  label: string;
  values: (number | null)[];
  colour: string;
}

/**
 * A bar chart of one or more series over shared labels: vertical by
 * default, horizontal (`across`) for long labels such as criteria.
 * `percent` scales 0–1 values to 0–100%.
 */
export function Bars({
  labels,
  series,
  across = false,
  percent = false,
  title,
  testId,
  height,
}: {
  labels: string[];
  series: Series[];
  across?: boolean;
  percent?: boolean;
  /** The value axis's title, in plain words. */
  title: string;
  testId: string;
  height: number;
}) {
  const canvas = useRef<HTMLCanvasElement | null>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const value = {
      min: 0,
      ...(percent ? { max: 100, ticks: { callback: (v: string | number) => `${v}%` } } : { ticks: { precision: 0 } }),
      title: { display: true, text: title },
      grid: { color: "#e2e5ea" },
    };
    const category = { ticks: { font: { size: 11 } }, grid: { display: false } };
    const chart = new Chart(canvas.current, {
      type: "bar",
      data: {
        labels,
        datasets: series.map((s) => ({
          label: s.label,
          data: s.values.map((v) => (v === null ? null : percent ? v * 100 : v)),
          backgroundColor: s.colour,
          borderRadius: 3,
          maxBarThickness: 18,
        })),
      },
      options: {
        indexAxis: across ? "y" : "x",
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: across ? { x: value, y: category } : { x: category, y: value },
        plugins: { legend: { display: series.length > 1, position: "bottom" } },
      },
    });
    return () => chart.destroy();
  }, [labels, series, across, percent, title]);
  return (
    <div className="gr-chart" style={{ height: `${height}px` }}>
      <canvas ref={canvas} role="img" aria-label={title} data-testid={testId} />
    </div>
  );
}
