import { useState, type FormEvent, type InputHTMLAttributes } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import { ErrorBanner } from "../components/ErrorBanner";

/** One labelled text field of the form. */
function Field({
  label,
  testId,
  value,
  onChange,
  mono = false,
  ...input
}: {
  label: string;
  testId: string;
  value: string;
  onChange: (value: string) => void;
  mono?: boolean;
} & Pick<InputHTMLAttributes<HTMLInputElement>, "type" | "required" | "autoFocus" | "autoComplete" | "placeholder">) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        {...input}
        className={mono ? "input mono" : "input"}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        data-testid={testId}
      />
    </label>
  );
}

/** Signing in to the team's hub: its address, then a login and password or an access token. */
export function HubSignIn({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) {
  const [url, setUrl] = useState("");
  const [how, setHow] = useState<"password" | "token">("password");
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<AppError | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.hubSignIn(url.trim(), login.trim(), how === "password" ? password : "", how === "token" ? token.trim() : "");
      onDone();
    } catch (err) {
      setError(err as AppError);
      setBusy(false);
    }
  };

  return (
    <div className="center-screen hub-sign-in" data-screen="hub-sign-in">
      <form
        className="card hub-sign-in-form"
        onSubmit={(e) => void submit(e)}
        onKeyDown={(e) => e.key === "Escape" && onCancel()}
        aria-labelledby="hub-sign-in-title"
      >
        <h1 id="hub-sign-in-title" className="hub-sign-in-title">
          Sign in to your team hub
        </h1>
        <p className="muted small">
          Your recordings are always saved on this computer first. Once you are signed in, they are also sent to your
          team's hub, and you see the tasks assigned to you.
        </p>
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        <Field label="Hub address" testId="hub-url" value={url} onChange={setUrl} type="url" required autoFocus placeholder="http://hub.example.org:8600" />
        <fieldset className="hub-how">
          <legend className="field-label">Sign in with</legend>
          <label className="row gap-sm">
            <input type="radio" name="how" checked={how === "password"} onChange={() => setHow("password")} />
            My login and password
          </label>
          <label className="row gap-sm">
            <input
              type="radio"
              name="how"
              checked={how === "token"}
              onChange={() => setHow("token")}
              data-testid="hub-how-token"
            />
            An access token from my team's admin
          </label>
        </fieldset>
        {how === "password" ? (
          <>
            <Field label="Login" testId="hub-login" value={login} onChange={setLogin} autoComplete="username" />
            <Field
              label="Password"
              testId="hub-password"
              value={password}
              onChange={setPassword}
              type="password"
              autoComplete="current-password"
            />
          </>
        ) : (
          <Field label="Access token" testId="hub-token" value={token} onChange={setToken} mono placeholder="ush_…" />
        )}
        <div className="row gap-sm hub-sign-in-actions">
          <button type="submit" className="btn btn-primary" disabled={busy} data-testid="hub-sign-in">
            {busy ? "Signing in…" : "Sign in"}
          </button>
          <button type="button" className="btn btn-ghost" onClick={onCancel} disabled={busy}>
            Back
          </button>
        </div>
      </form>
    </div>
  );
}
