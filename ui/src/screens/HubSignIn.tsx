import { useState, type FormEvent } from "react";
import { api } from "../api";
import type { AppError } from "../bindings/AppError";
import { ErrorBanner } from "../components/ErrorBanner";

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
        <label className="field">
          <span className="field-label">Hub address</span>
          <input
            className="input"
            type="url"
            required
            autoFocus
            placeholder="http://hub.example.org:8600"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            data-testid="hub-url"
          />
        </label>
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
            <label className="field">
              <span className="field-label">Login</span>
              <input
                className="input"
                autoComplete="username"
                value={login}
                onChange={(e) => setLogin(e.target.value)}
                data-testid="hub-login"
              />
            </label>
            <label className="field">
              <span className="field-label">Password</span>
              <input
                className="input"
                type="password"
                autoComplete="current-password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                data-testid="hub-password"
              />
            </label>
          </>
        ) : (
          <label className="field">
            <span className="field-label">Access token</span>
            <input
              className="input mono"
              placeholder="ush_…"
              value={token}
              onChange={(e) => setToken(e.target.value)}
              data-testid="hub-token"
            />
          </label>
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
