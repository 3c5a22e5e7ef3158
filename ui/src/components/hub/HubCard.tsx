import type { HubView } from "../../bindings/HubView";
import { lastSentText, roleText, waitingText } from "../../lib/hub";

/** The start screen's team hub card: not connected, or who is signed in and what waits to be sent. */
export function HubCard({
  view,
  busy,
  onSignIn,
  onSync,
  onSignOut,
}: {
  view: HubView | null;
  busy: boolean;
  onSignIn: () => void;
  onSync: () => void;
  onSignOut: () => void;
}) {
  const account = view?.account ?? null;
  if (!account) {
    return (
      <section className="card hub-card" aria-labelledby="hub-title" data-testid="hub-card">
        <h2 id="hub-title" className="card-title">
          Team hub
        </h2>
        <p className="small muted">Not connected. Your recordings stay on this computer.</p>
        <button type="button" className="btn btn-secondary btn-sm" onClick={onSignIn} data-testid="hub-open-sign-in">
          Sign in to a team hub
        </button>
      </section>
    );
  }
  const sending = busy || view?.syncing;
  return (
    <section className="card hub-card" aria-labelledby="hub-title" data-testid="hub-card">
      <h2 id="hub-title" className="card-title">
        Team hub
      </h2>
      <p className="small hub-who" data-testid="hub-who">
        Signed in as <strong>{account.name}</strong> ({roleText(account.role)})
        <span className="muted hub-url"> at {account.url}</span>
      </p>
      {view && (
        <div className={`hub-sync${view.waiting > 0 ? " hub-sync-waiting" : ""}`} aria-live="polite">
          <div className="hub-waiting" data-testid="hub-waiting">
            {sending ? "Sending…" : waitingText(view)}
          </div>
          <div className="small muted" data-testid="hub-last-sent">
            {lastSentText(view)}
          </div>
        </div>
      )}
      {view?.last_error && (
        <p className="hub-error small" role="alert" data-testid="hub-error">
          {view.last_error}
        </p>
      )}
      <div className="row gap-sm hub-actions">
        <button type="button" className="btn btn-primary btn-sm" onClick={onSync} disabled={!!sending} data-testid="hub-sync">
          {sending ? "Sending…" : "Send now"}
        </button>
        <button type="button" className="btn btn-ghost btn-sm" onClick={onSignOut} disabled={busy} data-testid="hub-sign-out">
          Sign out
        </button>
      </div>
    </section>
  );
}
