// Errors in words a lawyer or an accountant can act on. The engine's error
// codes become a plain headline; its message (guard messages are already
// plain English) follows as the explanation. Arguments that break a tool's
// schema arrive as data (`problems`: field, keyword, expected), worded
// here; the engine's own message for them is written for language models.
import type { ArgumentProblem } from "../bindings/ArgumentProblem";
import type { ObservationError } from "../bindings/ObservationError";
import type { ObservationErrorCode } from "../bindings/ObservationErrorCode";

export interface PlainError {
  headline: string;
  explanation: string;
  /** What the expert can do about it. */
  advice?: string;
}

// Keyed by the engine's codes (generated), so a code it never sends cannot
// be listed and a new one must be.
const HEADLINES: Record<ObservationErrorCode, { headline: string; advice?: string }> = {
  guard_failed: {
    headline: "The system refused this action",
    advice: "Nothing was changed. Read the reason, then fix the details or choose a different action.",
  },
  invalid_arguments: {
    headline: "Some details are missing or not in the expected form",
    advice: "Nothing was changed. Check the highlighted details and run it again.",
  },
  // Also a tool that exists but that this task does not allow.
  unknown_tool: {
    headline: "This action is not available for this task",
    advice: "Pick another tool from the list (Ctrl+K).",
  },
  tool_failed: {
    headline: "The system could not complete this action",
    advice: "Nothing was changed. Check the details you entered and try again.",
  },
  script_failed: {
    headline: "The system could not complete this action",
    advice: "Nothing was changed. Check the details you entered and try again.",
  },
};

const TYPE_WORDS: Record<string, string> = {
  number: "must be a number",
  integer: "must be a whole number",
  string: "must be text",
  boolean: "must be yes or no",
  array: "must be a list",
  object: "must be a group of details",
};

const show = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** `filter.status` → "Filter status". */
const label = (field: string) => humanize(field.replace(/\./g, " "));

/** The fields an alternative of `anyOf`/`oneOf` would need, if it only
 * asks for fields to be filled in. */
function requiredFields(alternative: unknown): string[] | null {
  if (!Array.isArray(alternative)) return null;
  const fields = alternative.map((p: Partial<ArgumentProblem>) => (p.keyword === "required" ? p.field : undefined));
  return fields.every((f): f is string => typeof f === "string") ? fields : null;
}

/** What is wrong, as the end of a sentence whose subject is the field. */
function predicate(p: ArgumentProblem): string {
  const e = p.expected;
  switch (p.keyword) {
    case "required":
      return "is required";
    case "type":
      return (typeof e === "string" && TYPE_WORDS[e]) || "is not in the expected form";
    case "enum":
      return Array.isArray(e) ? `must be one of: ${e.map(show).join(", ")}` : "must be one of the options";
    case "const":
      return `must be ${show(e)}`;
    case "minimum":
      return `must be at least ${show(e)}`;
    case "maximum":
      return `must be at most ${show(e)}`;
    case "exclusiveMinimum":
      return `must be more than ${show(e)}`;
    case "exclusiveMaximum":
      return `must be less than ${show(e)}`;
    case "multipleOf":
      return `must be a multiple of ${show(e)}`;
    case "minLength":
      return `must be at least ${show(e)} characters long`;
    case "maxLength":
      return `must be at most ${show(e)} characters long`;
    case "minItems":
      return `must have at least ${show(e)} items`;
    case "maxItems":
      return `must have at most ${show(e)} items`;
    case "additionalProperties":
    case "unevaluatedProperties":
      return "is not a detail this tool takes";
    default:
      return "is not in the expected form";
  }
}

/** One problem as one sentence. */
export function plainProblem(p: ArgumentProblem): string {
  if (p.keyword === "anyOf" || p.keyword === "oneOf") {
    const groups = Array.isArray(p.expected) ? p.expected.map(requiredFields) : [];
    if (groups.length > 0 && groups.every((g): g is string[] => g !== null && g.length > 0)) {
      const options = groups.map((g) => g.map(label).join(" and "));
      const which = options.length > 2 ? "at least one of " : "either ";
      return `Please fill in ${which}${options.join(options.length > 2 ? ", " : " or ")}.`;
    }
  }
  const subject = p.field ? label(p.field) : "The details";
  return `${subject} ${predicate(p)}.`;
}

export function plainStepError(error: ObservationError): PlainError {
  const known = HEADLINES[error.code];
  const problems = error.problems ?? [];
  return {
    headline: known?.headline ?? "This action did not work",
    explanation: problems.length > 0 ? problems.map(plainProblem).join(" ") : error.message,
    advice: known?.advice,
  };
}

/** A column's label (or a table's or tool's title): the world's plain words
 * for it in `labels`, else its name made readable. */
export function columnLabel(name: string, labels?: Partial<Record<string, string>> | null): string {
  return labels?.[name] ?? humanize(name);
}

/** `customer_id` → "Customer id". */
export function humanize(name: string): string {
  const words = name.replace(/_/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
