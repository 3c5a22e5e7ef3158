import { describe as suite, expect, it } from "vitest";
import type { Agreement } from "../bindings/Agreement";
import { describe, methodName, strength, tone } from "./agreement";

const base: Agreement = { method: "cohen_kappa", value: 0.62, graders: 2, items: 14, percent: 0.93, note: null };

suite("agreement in words", () => {
  it("names the statistic and its strength in the usual bands", () => {
    expect(methodName("cohen_kappa")).toBe("Cohen's κ");
    expect(methodName("krippendorff_alpha")).toBe("Krippendorff's α");
    expect(methodName("krippendorff_alpha_ordinal")).toBe("Krippendorff's α on levels");
    expect(describe(base)).toBe("0.62 (substantial)");
    expect(strength(-0.1)).toBe("worse than chance");
    expect(strength(0.2)).toBe("slight");
    expect(strength(0.81)).toBe("almost perfect");
  });

  it("says why there is no value instead of a number", () => {
    const none: Agreement = { ...base, method: "none", value: null, note: "Only one grader has graded these runs; agreement needs two." };
    expect(describe(none)).toBe(none.note);
    expect(describe({ ...none, note: null })).toBe("Not enough grades yet.");
    expect(tone(null)).toBe("grey");
    expect([tone(0.1), tone(0.5), tone(0.9)]).toEqual(["red", "amber", "green"]);
  });
});
