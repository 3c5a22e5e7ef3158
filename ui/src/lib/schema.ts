// Turns a tool's JSON Schema (as the engine declares it) into what the form
// builder needs: readable labels, required fields first, text areas for
// long answers, and "at least one of" rules lifted out of `anyOf` (which
// @rjsf would otherwise draw as a confusing "Option 1 / Option 2" picker).
import type { RJSFSchema, UiSchema } from "@rjsf/utils";
import { humanize } from "./errors";

export interface PreparedForm {
  schema: RJSFSchema;
  uiSchema: UiSchema;
  /** Groups of fields of which at least one must be filled in. */
  alternatives: string[][];
}

const LONG_TEXT = /(reason|body|resolution|note|message|comment|description|details|summary)$/;

function onlyRequired(s: unknown): string[] | null {
  if (!s || typeof s !== "object") return null;
  const keys = Object.keys(s);
  const required = (s as { required?: unknown }).required;
  if (keys.length === 1 && Array.isArray(required) && required.every((r) => typeof r === "string")) {
    return required as string[];
  }
  return null;
}

export function prepareToolForm(parameters: Record<string, unknown>): PreparedForm {
  const schema: RJSFSchema = structuredClone(parameters) as RJSFSchema;
  const alternatives: string[][] = [];
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = schema[key];
    if (Array.isArray(list)) {
      const groups = list.map(onlyRequired);
      if (groups.every((g): g is string[] => g !== null)) {
        alternatives.push(groups.flat());
        delete schema[key];
      }
    }
  }
  // Required fields first, in the author's order (the `required` list keeps
  // it; property maps may arrive sorted by name), then the optional ones.
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const uiSchema: UiSchema = { "ui:submitButtonOptions": { norender: true }, "ui:order": [...required, "*"] };
  const properties = (schema.properties ?? {}) as Record<string, RJSFSchema>;
  for (const [name, prop] of Object.entries(properties)) {
    if (typeof prop !== "object" || prop === null) continue;
    if (!prop.title) prop.title = humanize(name);
    const ui: Record<string, unknown> = {};
    // No placeholders from the schema's examples: grey sample text in an
    // empty field reads as data (the help line under it shows the example).
    if (prop.type === "string" && !prop.enum && LONG_TEXT.test(name)) {
      ui["ui:widget"] = "textarea";
      ui["ui:options"] = { rows: 3 };
    }
    if (Object.keys(ui).length > 0) uiSchema[name] = ui;
  }
  return { schema, uiSchema, alternatives };
}
