import { FocusTrap } from "focus-trap-react";
import { useEffect, useRef, type ReactNode } from "react";

/**
 * Where focus starts in a dialog: an element already focused inside it (a
 * React `autoFocus`), then the first field of the body, then the primary
 * button. Never the header's Close button: Enter or a shortcut on Close
 * would throw away what the dialog is for (the review's Submit).
 */
export function initialFocusIn(dialog: HTMLElement): HTMLElement {
  const active = document.activeElement;
  if (active instanceof HTMLElement && dialog.contains(active)) return active;
  return (
    dialog.querySelector<HTMLElement>("[data-autofocus]") ??
    dialog.querySelector<HTMLElement>(".modal-body input, .modal-body textarea, .modal-body select") ??
    dialog.querySelector<HTMLElement>("button.btn-primary:not([disabled])") ??
    dialog.querySelector<HTMLElement>(".modal-body button, .modal-footer button") ??
    dialog
  );
}

/**
 * A dialog over the page. Focus is trapped inside it (Tab and Shift+Tab
 * cycle through its controls) and returns where it was when it closes. Esc
 * closes it; Ctrl+Enter (⌘+Enter) runs `onConfirm` from anywhere in it.
 */
export function Modal({
  title,
  onClose,
  onConfirm,
  children,
  footer,
  width = 720,
  testId,
}: {
  title: string;
  onClose: () => void;
  /** The dialog's main action, bound to Ctrl+Enter; omit when there is none (or while it runs). */
  onConfirm?: () => void;
  children: ReactNode;
  footer?: ReactNode;
  width?: number;
  testId?: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        onClose();
      } else if (onConfirm && e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        e.stopPropagation();
        onConfirm();
      }
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [onClose, onConfirm]);
  return (
    <FocusTrap
      focusTrapOptions={{
        initialFocus: () => (ref.current ? initialFocusIn(ref.current) : false),
        fallbackFocus: () => ref.current ?? document.body,
        // Esc is handled above, so the dialog's owner decides what closing means.
        escapeDeactivates: false,
        allowOutsideClick: true,
        returnFocusOnDeactivate: true,
        // Every control of a dialog is visible; skipping the layout check
        // also keeps the trap working where there is no layout (tests).
        tabbableOptions: { displayCheck: "none" },
      }}
    >
      <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
        <div
          className="modal"
          role="dialog"
          aria-modal="true"
          aria-label={title}
          style={{ width }}
          ref={ref}
          tabIndex={-1}
          data-testid={testId}
        >
          <header className="modal-header">
            <h2>{title}</h2>
            <button type="button" className="btn btn-ghost btn-sm" onClick={onClose} aria-label="Close">
              Close <kbd className="kbd">Esc</kbd>
            </button>
          </header>
          <div className="modal-body">{children}</div>
          {footer && <footer className="modal-footer">{footer}</footer>}
        </div>
      </div>
    </FocusTrap>
  );
}
