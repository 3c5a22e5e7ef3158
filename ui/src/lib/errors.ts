// Errors in words a lawyer or an accountant can act on. The engine's error
// codes become a plain headline; its message (guard messages are already
// plain English) follows as the explanation.
import type { StepError } from "../bindings/StepError";

export interface PlainError {
  headline: string;
  explanation: string;
  /** What the expert can do about it. */
  advice?: string;
}

const HEADLINES: Record<string, { headline: string; advice?: string }> = {
  guard_failed: {
    headline: "The system refused this action",
    advice: "Nothing was changed. Read the reason, then fix the details or choose a different action.",
  },
  invalid_arguments: {
    headline: "Some details are missing or not in the expected form",
    advice: "Nothing was changed. Check the highlighted details and run it again.",
  },
  unknown_tool: {
    headline: "This action is not available for this task",
    advice: "Pick another tool from the list (Ctrl+K).",
  },
  not_allowed: {
    headline: "This action is not allowed in this task",
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

/** Rewrites the engine's validation messages ("amount: \"x\" is not of
 * type \"number\"") into sentences, one per problem. */
export function plainDetails(message: string): string {
  return message
    .replace(/^invalid arguments for [a-z0-9_]+:\s*/i, "")
    .split("; ")
    .map((problem) => {
      const m = /^([a-z0-9_.]+): (.*)$/i.exec(problem);
      const [field, rest] = m ? [humanize(m[1] ?? ""), m[2] ?? ""] : ["", problem];
      const text = rest
        .replace(/^"([a-z0-9_]+)" is a required property$/i, (_, f: string) => `${humanize(f)} is required`)
        .replace(/.* is not valid under any of the schemas listed in the 'anyOf' keyword$/, "fill in at least one of the alternatives")
        .replace(/.* is not of type "number"$/, "must be a number")
        .replace(/.* is not of type "integer"$/, "must be a whole number")
        .replace(/.* is not of type "string"$/, "must be text")
        .replace(/.* does not match ".*"$/, "is not in the expected form")
        .replace(/^Additional properties are not allowed.*$/, "contains a detail this tool does not take");
      const sentence = field ? `${field}: ${text}` : text;
      return sentence.charAt(0).toUpperCase() + sentence.slice(1) + (sentence.endsWith(".") ? "" : ".");
    })
    .join(" ");
}

export function plainStepError(error: StepError): PlainError {
  const known = HEADLINES[error.code];
  const explanation = error.code === "invalid_arguments" ? plainDetails(error.message) : error.message;
  return {
    headline: known?.headline ?? "This action did not work",
    explanation,
    advice: known?.advice,
  };
}

/** `customer_id` → "Customer id". */
export function humanize(name: string): string {
  const words = name.replace(/_/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
