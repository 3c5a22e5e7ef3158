/** The way back to the start screen, on screens that have nothing else in their top bar. */
export function BackToTasks({ onHome }: { onHome: () => void }) {
  return (
    <button type="button" className="btn btn-ghost btn-sm" onClick={onHome} data-testid="back-home">
      Back to tasks <kbd className="kbd">Esc</kbd>
    </button>
  );
}
