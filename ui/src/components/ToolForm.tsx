import Form from "@rjsf/core";
import type { FieldTemplateProps, RJSFSchema } from "@rjsf/utils";
import { useEffect, useMemo, useRef, type KeyboardEvent } from "react";
import type { StepView } from "../bindings/StepView";
import type { ToolInfo } from "../bindings/ToolInfo";
import { prepareToolForm } from "../lib/schema";
import { formValidator } from "../lib/validator";
import { ShortcutKeys } from "./Kbd";
import { StepResult } from "./StepResult";
import { kindLabel } from "./ToolPalette";

type Data = Record<string, unknown>;

function FieldTemplate(props: FieldTemplateProps) {
  const { id, label, required, rawDescription, rawErrors, children, hidden, displayLabel, schema } = props;
  if (hidden) return <div hidden>{children}</div>;
  const errors = (rawErrors ?? []).map((e) => (
    <div key={e} className="field-error">
      {e}
    </div>
  ));
  if ((schema as RJSFSchema).type === "object") {
    return (
      <div className="form-root">
        {children}
        {errors}
      </div>
    );
  }
  return (
    <div className={`form-field${rawErrors?.length ? " has-error" : ""}`}>
      {displayLabel && (
        <label htmlFor={id} className="field-label">
          {label}
          <span className={required ? "req" : "opt"}>{required ? "required" : "optional"}</span>
        </label>
      )}
      {children}
      {displayLabel && rawDescription && <div className="field-help">{rawDescription}</div>}
      {errors}
    </div>
  );
}

/** Drops empty answers, so optional parameters are simply left out. */
export function cleanArgs(data: Data | undefined): Data {
  return Object.fromEntries(
    Object.entries(data ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== ""),
  );
}

/** The selected tool's form, built from its JSON Schema, with a Run button. */
export function ToolForm({
  tool,
  data,
  onData,
  onRun,
  disabled,
  busy,
  lastStep,
}: {
  tool: ToolInfo;
  data: Data;
  onData: (d: Data) => void;
  onRun: (args: Data) => void;
  disabled: boolean;
  busy: boolean;
  lastStep: StepView | null;
}) {
  const prepared = useMemo(() => prepareToolForm(tool.parameters), [tool]);
  const validator = useMemo(() => formValidator(prepared.alternatives), [prepared]);
  const form = useRef<Form<Data>>(null);
  const resultRef = useRef<HTMLDivElement>(null);
  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      e.stopPropagation();
      form.current?.submit();
    }
  };
  const hasFields = Object.keys((prepared.schema.properties as object | undefined) ?? {}).length > 0;
  const showResult =
    lastStep && "tool" in lastStep.action && lastStep.action.tool === tool.name && !lastStep.retracted;
  // Bring a new result into view: it may be below the fold of a long form.
  const shownIdx = showResult ? lastStep?.idx : undefined;
  useEffect(() => {
    if (shownIdx !== undefined) resultRef.current?.scrollIntoView?.({ block: "nearest" });
  }, [shownIdx]);
  return (
    <div className="tool-form" onKeyDown={onKey} data-testid="tool-form" data-tool={tool.name}>
      <div className="tool-head">
        <div>
          <h3 className="tool-title">{tool.title}</h3>
          <p className="tool-desc">{tool.description}</p>
        </div>
        <span className={`chip ${tool.kind === "read" ? "chip-blue" : "chip-amber"}`}>{kindLabel(tool)}</span>
      </div>
      {prepared.alternatives.length > 0 && (
        <p className="small muted">
          Fill in{" "}
          {prepared.alternatives
            .map((g) => g.map((n) => (prepared.schema.properties as Record<string, RJSFSchema>)[n]?.title ?? n).join(" or "))
            .join("; ")}
          .
        </p>
      )}
      <Form<Data>
        key={tool.name}
        ref={form}
        idPrefix={`f_${tool.name}`}
        schema={prepared.schema}
        uiSchema={prepared.uiSchema}
        formData={data}
        validator={validator}
        templates={{ FieldTemplate }}
        showErrorList={false}
        noHtml5Validate
        disabled={disabled}
        onChange={(e) => onData((e.formData ?? {}) as Data)}
        onSubmit={(e) => onRun(cleanArgs(e.formData as Data))}
        onError={() => undefined}
      >
        <div className="tool-actions">
          <button type="submit" className="btn btn-primary" disabled={disabled || busy} data-testid="run">
            {busy ? "Running…" : "Run"} <ShortcutKeys name="run" />
          </button>
          {!hasFields && <span className="muted small">This tool needs no details.</span>}
          {tool.kind === "write" && (
            <span className="muted small">Changes the company's records. You can undo it.</span>
          )}
        </div>
      </Form>
      {showResult && lastStep && (
        <div className="tool-result" ref={resultRef}>
          <StepResult step={lastStep} />
        </div>
      )}
    </div>
  );
}
