// Agreement statistics in words a reviewer reads at a glance.
import type { Agreement } from "../bindings/Agreement";
import type { Method } from "../bindings/Method";

/** The statistic's name as people say it. */
export function methodName(m: Method): string {
  if (m === "cohen_kappa") return "Cohen's κ";
  if (m === "krippendorff_alpha") return "Krippendorff's α";
  if (m === "krippendorff_alpha_ordinal") return "Krippendorff's α on levels";
  return "Agreement";
}

/**
 * Landis and Koch's (1977) bands, the ones most readers know: below 0 is
 * worse than chance, 0.81 and up almost perfect.
 */
export function strength(value: number): string {
  if (value < 0) return "worse than chance";
  if (value <= 0.2) return "slight";
  if (value <= 0.4) return "fair";
  if (value <= 0.6) return "moderate";
  if (value <= 0.8) return "substantial";
  return "almost perfect";
}

/** "0.62 (substantial)", or the reason there is no value. */
export function describe(a: Agreement): string {
  if (a.value === null) return a.note ?? "Not enough grades yet.";
  return `${a.value.toFixed(2)} (${strength(a.value)})`;
}

/** The bar colour for a value: red below chance, amber weak, green strong. */
export function tone(value: number | null): "grey" | "red" | "amber" | "green" {
  if (value === null) return "grey";
  if (value < 0.2) return "red";
  if (value <= 0.6) return "amber";
  return "green";
}
