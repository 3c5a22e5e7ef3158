// A small validator for tool forms. @rjsf's usual validator (Ajv) compiles
// schemas with `new Function`, which the app's content security policy
// forbids; tool parameters are flat objects, so the checks a person benefits
// from before pressing Run are few. The engine validates every call fully
// anyway, and records what it refuses.
import {
  ErrorSchemaBuilder,
  toErrorList,
  type CustomValidator,
  type ErrorTransformer,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  type ValidationData,
  type ValidatorType,
} from "@rjsf/utils";
import { humanize } from "./errors";

type Data = Record<string, unknown>;

const isEmpty = (v: unknown) => v === undefined || v === null || v === "";

/** Problems with `data`, as [field or "" for the whole form, message]. */
export function problems(schema: RJSFSchema, data: Data | undefined, alternatives: string[][] = []): [string, string][] {
  const out: [string, string][] = [];
  const value = data ?? {};
  const props = (schema.properties ?? {}) as Record<string, RJSFSchema>;
  for (const name of (schema.required as string[] | undefined) ?? []) {
    if (isEmpty(value[name])) out.push([name, "Please fill this in."]);
  }
  for (const [name, p] of Object.entries(props)) {
    const v = value[name];
    if (isEmpty(v) || typeof p !== "object") continue;
    const label = p.title ?? humanize(name);
    if ((p.type === "number" || p.type === "integer") && typeof v === "number") {
      if (p.type === "integer" && !Number.isInteger(v)) out.push([name, "Please enter a whole number."]);
      if (typeof p.minimum === "number" && v < p.minimum) out.push([name, `Must be at least ${p.minimum}.`]);
      if (typeof p.maximum === "number" && v > p.maximum) out.push([name, `Must be at most ${p.maximum}.`]);
      if (typeof p.exclusiveMinimum === "number" && v <= p.exclusiveMinimum)
        out.push([name, `Must be more than ${p.exclusiveMinimum}.`]);
      if (typeof p.exclusiveMaximum === "number" && v >= p.exclusiveMaximum)
        out.push([name, `Must be less than ${p.exclusiveMaximum}.`]);
    }
    if (p.type === "string" && typeof v === "string") {
      if (typeof p.minLength === "number" && v.length < p.minLength)
        out.push([name, `Please write at least ${p.minLength} characters.`]);
      if (typeof p.maxLength === "number" && v.length > p.maxLength)
        out.push([name, `Please keep it under ${p.maxLength + 1} characters.`]);
      if (typeof p.pattern === "string") {
        let re: RegExp | null = null;
        try {
          re = new RegExp(p.pattern, "u");
        } catch {
          re = null;
        }
        if (re && !re.test(v)) {
          const example = /e\.g\.\s+([^\s,;)]+)/.exec(String(p.description ?? ""))?.[1];
          out.push([name, example ? `${label} should look like ${example.replace(/\.$/, "")}.` : `${label} is not in the expected form.`]);
        }
      }
    }
    if (Array.isArray(p.enum) && !p.enum.includes(v as never)) out.push([name, "Please pick one of the options."]);
  }
  for (const group of alternatives) {
    if (group.every((name) => isEmpty(value[name]))) {
      const labels = group.map((n) => props[n]?.title ?? humanize(n));
      out.push(["", `Please fill in ${labels.length > 2 ? "at least one of " : "either "}${labels.join(labels.length > 2 ? ", " : " or ")}.`]);
    }
  }
  return out;
}

/** An @rjsf validator over `problems`, knowing the form's alternatives. */
export function formValidator(alternatives: string[][] = []): ValidatorType<Data, RJSFSchema> {
  const validateFormData = (
    formData: Data | undefined,
    schema: RJSFSchema,
    customValidate?: CustomValidator<Data, RJSFSchema>,
    transformErrors?: ErrorTransformer<Data, RJSFSchema>,
    uiSchema?: UiSchema<Data, RJSFSchema>,
  ): ValidationData<Data> => {
    const builder = new ErrorSchemaBuilder<Data>();
    for (const [field, message] of problems(schema, formData, alternatives)) {
      if (field) builder.addErrors(message, field);
      else builder.addErrors(message);
    }
    let errors: RJSFValidationError[] = toErrorList(builder.ErrorSchema);
    if (transformErrors) errors = transformErrors(errors, uiSchema);
    void customValidate;
    return { errors, errorSchema: builder.ErrorSchema };
  };
  return {
    validateFormData,
    isValid: (schema, formData) => problems(schema, formData as Data).length === 0,
    rawValidation: (schema, formData) => ({
      errors: problems(schema, formData as Data).map(([property, message]) => ({ property, message })) as never[],
    }),
  };
}
