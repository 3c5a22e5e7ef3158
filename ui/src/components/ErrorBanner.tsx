import type { AppError } from "../bindings/AppError";

/** A failed command, in plain words, with a way to dismiss it. */
export function ErrorBanner({ error, onDismiss }: { error: AppError; onDismiss?: () => void }) {
  return (
    <div className="banner banner-error" role="alert">
      <div className="banner-body">
        <strong>That did not work.</strong> {error.message}
      </div>
      {onDismiss && (
        <button type="button" className="btn btn-ghost btn-sm" onClick={onDismiss} aria-label="Dismiss">
          Dismiss
        </button>
      )}
    </div>
  );
}
