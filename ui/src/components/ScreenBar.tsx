import type { ReactNode } from "react";

/** The top bar of a screen: the brand, the screen's name, and its controls on the right. */
export function ScreenBar({ sub, children }: { sub: string; children: ReactNode }) {
  return (
    <header className="topbar">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true">
          U
        </span>
        <span className="brand-name">Understudy</span>
        <span className="brand-sub">{sub}</span>
      </div>
      <div className="row gap-sm">{children}</div>
    </header>
  );
}

/**
 * "Reviewing as Lee Park" and the way back to the start screen: the right
 * side of the reviewer's and the grader's screens.
 */
export function ActingAs({
  role,
  name,
  testId,
  none,
  onHome,
}: {
  /** "Reviewing", "Grading". */
  role: string;
  name: string | undefined;
  testId: string;
  /** What shows without a profile. */
  none: string;
  onHome: () => void;
}) {
  return (
    <>
      <span className="muted small">
        {name ? (
          <>
            {role} as <strong data-testid={testId}>{name}</strong>
          </>
        ) : (
          none
        )}
      </span>
      <button type="button" className="btn btn-ghost btn-sm" onClick={onHome} data-testid="back-home">
        Back to tasks <kbd className="kbd">Esc</kbd>
      </button>
    </>
  );
}
