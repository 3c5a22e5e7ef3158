// The values an action criterion matches a tool's arguments against, as a
// form built (by @rjsf) from the tool's own JSON Schema: the same labels,
// choices and checks the expert saw when recording. Every field is
// optional here ("leave empty: any value"), since a criterion names only
// the arguments it cares about.
//
// Validation uses the app's own validator (src/lib/validator.ts), not
// @rjsf/validator-ajv8: Ajv compiles schemas with `new Function`, which the
// window's content security policy forbids, and precompiling needs the
// schemas at build time (tools come from the world at run time).
import Form from "@rjsf/core";
import type { FieldTemplateProps, ObjectFieldTemplateProps, RJSFSchema, UiSchema } from "@rjsf/utils";
import { useMemo, useState } from "react";
import { humanize } from "../../lib/errors";
import { formValidator } from "../../lib/validator";
import { str } from "./fields";

type Data = Record<string, unknown>;

/** A value the rubric matches loosely (`{ number = 79, tolerance = 0.005 }`, `{ any_of = […] }`), not one a form field holds. */
export function isMatcher(v: unknown): boolean {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The tool's parameter schema as a matcher form: nothing required, no
 * defaults (an empty field matches any value), no "at least one of", and
 * without the arguments held as loose matchers (shown apart).
 */
export function argsSchema(parameters: Record<string, unknown>, loose: string[]): { schema: RJSFSchema; uiSchema: UiSchema } {
  const schema = structuredClone(parameters ?? {}) as RJSFSchema;
  const order = Array.isArray(schema.required) ? [...(schema.required as string[])] : [];
  for (const key of ["required", "anyOf", "oneOf", "allOf", "default"] as const) delete schema[key];
  const props = { ...((schema.properties ?? {}) as Record<string, RJSFSchema>) };
  const uiSchema: UiSchema = { "ui:submitButtonOptions": { norender: true }, "ui:order": [...order.filter((n) => n in props && !loose.includes(n)), "*"] };
  for (const name of Object.keys(props)) {
    if (loose.includes(name)) {
      delete props[name];
      continue;
    }
    const p = { ...(props[name] as RJSFSchema) };
    delete p.default;
    if (!p.title) p.title = humanize(name);
    props[name] = p;
    if (p.type === "boolean") uiSchema[name] = { "ui:widget": "select", "ui:placeholder": "(any)" };
    else if (Array.isArray(p.enum)) uiSchema[name] = { "ui:placeholder": "(any)" };
    else uiSchema[name] = { "ui:placeholder": "any" };
  }
  schema.properties = props;
  return { schema, uiSchema };
}

function FieldTemplate(props: FieldTemplateProps) {
  const { id, label, rawDescription, rawErrors, children, hidden, displayLabel, schema } = props;
  if (hidden) return <div hidden>{children}</div>;
  const errors = (rawErrors ?? []).map((e) => (
    <div key={e} className="rf-problem">
      {e}
    </div>
  ));
  if ((schema as RJSFSchema).type === "object") {
    return (
      <>
        {children}
        {errors}
      </>
    );
  }
  return (
    <div className={`rf-arg${rawErrors?.length ? " rf-invalid" : ""}`}>
      {displayLabel && (
        <label htmlFor={id} className="rf-arg-name" title={rawDescription || undefined}>
          {label}
        </label>
      )}
      {children}
      {errors}
    </div>
  );
}

/** The fields side by side, without the schema's title over them (the form's label says it). */
function ObjectFieldTemplate({ properties }: ObjectFieldTemplateProps) {
  return <div className="rf-args">{properties.filter((p) => !p.hidden).map((p) => p.content)}</div>;
}

/** Drops empty answers: an empty field matches any value. */
function cleaned(data: Data | undefined): Data {
  return Object.fromEntries(Object.entries(data ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== ""));
}

export interface ArgsFormProps {
  tool: string;
  parameters: Record<string, unknown>;
  args: Data;
  onArgs: (args: Data | undefined) => void;
}

/** The argument matchers of an action criterion, from the tool's JSON Schema. */
export function ArgsForm({ tool, parameters, args, onArgs }: ArgsFormProps) {
  const loose = Object.keys(args).filter((k) => isMatcher(args[k]));
  const looseKey = loose.join(",");
  const { schema, uiSchema } = useMemo(() => argsSchema(parameters, looseKey ? looseKey.split(",") : []), [parameters, looseKey]);
  const validator = useMemo(() => formValidator(), []);
  const plain = Object.fromEntries(Object.entries(args).filter(([k]) => !loose.includes(k)));
  const emit = (next: Data) => {
    const all = cleaned(next);
    if (JSON.stringify(all) !== JSON.stringify(args)) onArgs(Object.keys(all).length ? all : undefined);
  };
  const hasFields = Object.keys((schema.properties as object | undefined) ?? {}).length > 0;
  return (
    <div className="rf-argsform" data-testid="args-form" data-tool={tool}>
      {hasFields && (
        <Form<Data>
          key={`${tool}:${looseKey}`}
          idPrefix={`arg_${tool}`}
          schema={schema}
          uiSchema={uiSchema}
          formData={plain}
          validator={validator}
          templates={{ FieldTemplate, ObjectFieldTemplate }}
          showErrorList={false}
          noHtml5Validate
          liveValidate
          onChange={(e) => emit({ ...cleaned(e.formData as Data), ...Object.fromEntries(loose.map((k) => [k, args[k]])) })}
          onSubmit={() => undefined}
          onError={() => undefined}
        />
      )}
      {!hasFields && loose.length === 0 && <div className="small muted">This tool takes no values.</div>}
      {loose.map((k) => (
        <LooseArg key={k} name={k} value={args[k]} onValue={(v) => emit({ ...args, [k]: v })} />
      ))}
    </div>
  );
}

/** An argument matched loosely, written as the rubric file writes it; cleared to match any value. */
function LooseArg({ name, value, onValue }: { name: string; value: unknown; onValue: (v: unknown) => void }) {
  const [text, setText] = useState(JSON.stringify(value));
  const [bad, setBad] = useState(false);
  return (
    <label className={`rf-arg${bad ? " rf-invalid" : ""}`}>
      <span className="rf-arg-name">{humanize(name)} (matched loosely)</span>
      <input
        className="mono"
        data-arg={name}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onBlur={() => {
          if (text.trim() === "") return onValue(undefined);
          try {
            setBad(false);
            onValue(JSON.parse(text));
          } catch {
            setBad(true);
          }
        }}
      />
      {bad && <span className="rf-problem">Write it as in the rubric file, e.g. {str({ number: 79, tolerance: 0.005 })}, or leave it empty.</span>}
    </label>
  );
}
