import { useState, type FormEvent } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import type { ExpertInput } from "../bindings/ExpertInput";
import type { ExpertView } from "../bindings/ExpertView";

const EMPTY: ExpertInput = { name: "", domain: "", credentials: "", credentials_attested: false };

/** The expert's profile: shown, edited, or filled in for the first time. */
export function ExpertCard({
  expert,
  experts,
  onChanged,
}: {
  expert: ExpertView | null;
  experts: ExpertView[];
  onChanged: (e: ExpertView) => void;
}) {
  const [editing, setEditing] = useState<"new" | "edit" | null>(expert ? null : "new");
  const [draft, setDraft] = useState<ExpertInput>(EMPTY);
  const [error, setError] = useState<AppError | null>(null);
  const [saving, setSaving] = useState(false);

  const startEdit = (mode: "new" | "edit") => {
    setDraft(mode === "edit" && expert ? { ...expert } : EMPTY);
    setEditing(mode);
    setError(null);
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setSaving(true);
    try {
      const saved = await api.saveExpert(editing === "edit" && expert ? expert.id : null, draft);
      setEditing(null);
      onChanged(saved);
    } catch (err) {
      setError(err as AppError);
    } finally {
      setSaving(false);
    }
  };

  if (editing || !expert) {
    const first = !expert;
    return (
      <section className="card expert-card" aria-labelledby="expert-title">
        <h2 id="expert-title" className="card-title">
          {first ? "Welcome — tell us who you are" : editing === "new" ? "New expert profile" : "Edit your profile"}
        </h2>
        {first && (
          <p className="muted">
            Your work is recorded under your name, so reviewers know whose expertise it reflects. You only do this
            once.
          </p>
        )}
        <form onSubmit={save} className="stack" data-testid="expert-form">
          <label className="field">
            <span className="field-label">Full name</span>
            <input
              name="name"
              autoFocus
              required
              value={draft.name}
              onChange={(e) => setDraft({ ...draft, name: e.target.value })}
              placeholder="e.g. Renee Okafor"
            />
          </label>
          <label className="field">
            <span className="field-label">Field of expertise</span>
            <input
              name="domain"
              value={draft.domain}
              onChange={(e) => setDraft({ ...draft, domain: e.target.value })}
              placeholder="e.g. Customer support, Tax law, Accounting"
            />
          </label>
          <label className="field">
            <span className="field-label">Credentials and experience</span>
            <textarea
              name="credentials"
              rows={3}
              value={draft.credentials}
              onChange={(e) => setDraft({ ...draft, credentials: e.target.value })}
              placeholder="e.g. 8 years leading a SaaS billing support team"
            />
          </label>
          <label className="check">
            <input
              type="checkbox"
              name="attest"
              checked={draft.credentials_attested}
              onChange={(e) => setDraft({ ...draft, credentials_attested: e.target.checked })}
            />
            <span>I confirm these credentials are true.</span>
          </label>
          {error && <p className="form-error">{error.message}</p>}
          <div className="row gap-sm">
            <button type="submit" className="btn btn-primary" disabled={saving || !draft.name.trim()}>
              {saving ? "Saving…" : "Save profile"}
            </button>
            {expert && (
              <button type="button" className="btn btn-ghost" onClick={() => setEditing(null)}>
                Cancel
              </button>
            )}
          </div>
        </form>
      </section>
    );
  }

  const others = experts.filter((e) => e.id !== expert.id);
  return (
    <section className="card expert-card" aria-labelledby="expert-title" data-testid="expert-profile">
      <div className="row space-between align-start">
        <div>
          <p className="eyebrow">Recording as</p>
          <h2 id="expert-title" className="expert-name">
            {expert.name}
          </h2>
          {expert.domain && <p className="muted">{expert.domain}</p>}
        </div>
        <div className="avatar" aria-hidden="true">
          {expert.name
            .split(/\s+/)
            .map((w) => w[0])
            .join("")
            .slice(0, 2)
            .toUpperCase()}
        </div>
      </div>
      {expert.credentials && <p className="credentials">{expert.credentials}</p>}
      <p className="small muted">
        {expert.verified
          ? "Credentials verified by an administrator."
          : expert.credentials_attested
            ? "Credentials confirmed by you; not yet verified."
            : "Credentials not yet confirmed."}
      </p>
      <div className="row gap-sm wrap">
        <button type="button" className="btn btn-secondary btn-sm" onClick={() => startEdit("edit")}>
          Edit profile
        </button>
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => startEdit("new")}>
          New profile
        </button>
        {others.length > 0 && (
          <select
            className="select-sm"
            aria-label="Switch expert"
            value=""
            onChange={async (e) => {
              if (!e.target.value) return;
              try {
                onChanged(await api.selectExpert(e.target.value));
              } catch (err) {
                setError(err as AppError);
              }
            }}
          >
            <option value="">Switch expert…</option>
            {others.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        )}
      </div>
      {error && <p className="form-error">{error.message}</p>}
    </section>
  );
}
