// Shapes as the app sends them, for component tests.
import type { EpisodeView } from "../bindings/EpisodeView";
import type { StepTaken } from "../bindings/StepTaken";
import type { StepView } from "../bindings/StepView";
import type { TaskBrief } from "../bindings/TaskBrief";
import type { ToolInfo } from "../bindings/ToolInfo";
import type { Transitions } from "../bindings/Transitions";

export const task: TaskBrief = {
  id: "duplicate-charge",
  title: "Refund a duplicate March charge",
  difficulty: "easy",
  instruction: "You are a Brightline support lead. Resolve ticket T-1042 following the support policy.",
  opening_message: "Hi, I was billed twice for March.",
  customer: "Dana Whitfield, Harborlight Physio",
  max_steps: 20,
};

export const lookupCustomer: ToolInfo = {
  name: "lookup_customer",
  title: "Look up customer",
  description: "Find a customer account by email address or customer id (C-1234).",
  kind: "read",
  ends_episode: false,
  view: null,
  parameters: {
    type: "object",
    additionalProperties: false,
    anyOf: [{ required: ["email"] }, { required: ["customer_id"] }],
    properties: {
      email: { type: "string", description: "The account owner's email address, e.g. dana.whitfield@harborlight.io" },
      customer_id: { type: "string", pattern: "^C-[0-9]+$", description: "Customer id, e.g. C-1007" },
    },
  },
};

export const issueRefund: ToolInfo = {
  name: "issue_refund",
  title: "Issue refund",
  description: "Refund part or all of a paid invoice.",
  kind: "write",
  ends_episode: false,
  view: null,
  parameters: {
    type: "object",
    required: ["invoice_id", "amount", "reason", "ticket_id"],
    additionalProperties: false,
    properties: {
      invoice_id: { type: "string", pattern: "^INV-[0-9]+$", description: "Invoice number, e.g. INV-24073" },
      amount: { type: "number", exclusiveMinimum: 0, description: "Amount to refund in US dollars, e.g. 79.00" },
      reason: { type: "string", minLength: 5, description: "Why the money is being returned" },
      ticket_id: { type: "string", pattern: "^T-[0-9]+$", description: "The ticket the refund was requested on" },
    },
  },
};

let idx = 0;
export function step(partial: Partial<StepView>): StepView {
  const n = partial.idx ?? idx++;
  return {
    idx: n,
    action: { tool: "lookup_customer", args: { email: "dana.whitfield@harborlight.io" } },
    ok: true,
    text: "Harborlight Physio (C-1007)",
    content: { customer_id: "C-1007" },
    error: null,
    terminated: false,
    truncated: false,
    wall_at: "2025-03-04T09:00:00.000Z",
    active_ms: 1000 * (n + 1),
    rationale: null,
    flag: null,
    retracted: false,
    ...partial,
  };
}

/** What the recorder allows in a fresh episode in progress. */
export function transitions(partial: Partial<Transitions> = {}): Transitions {
  return {
    can_step: true,
    can_undo: false,
    can_redo: false,
    can_pause: true,
    can_resume: false,
    can_submit: true,
    can_abandon: true,
    ...partial,
  };
}

/** The allowed transitions for an episode with that status. */
export const CLOSED: Transitions = transitions({ can_step: false, can_pause: false, can_submit: false, can_abandon: false });
export const PAUSED: Transitions = transitions({ can_step: false, can_pause: false, can_resume: true });

/** What `run_action` returns for `partial`, in an episode still in progress. */
export function taken(partial: Partial<StepView> = {}, after: Partial<Transitions> = { can_undo: true }): StepTaken {
  return { step: step(partial), done: false, transitions: transitions(after) };
}

export function episode(partial: Partial<EpisodeView> = {}): EpisodeView {
  return {
    id: "ep-1",
    world_id: "support-desk",
    world_name: "Brightline Support Desk",
    task,
    status: "in_progress",
    active_ms: 0,
    done: false,
    transitions: transitions(),
    steps: [],
    tools: [lookupCustomer, issueRefund],
    final_message: null,
    created_at: "2025-03-04T09:00:00.000Z",
    drafts: [],
    ...partial,
  };
}
