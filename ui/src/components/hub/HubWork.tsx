import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "../../api";
import type { HubView } from "../../bindings/HubView";
import type { HubWorkView } from "../../bindings/HubWorkView";

/** How often a screen looks again while some of its work waits to be sent. */
const WAITING_POLL_MS = 1500;

/**
 * The team hub as a work screen sees it: who is signed in and where each
 * decision, grade or rubric version made here is. On opening, a signed-in
 * screen syncs once (so it lists what the hub has) and calls `onPulled`;
 * while work waits to be sent it looks again every 1.5 s. Without a hub it
 * stays null and the screen is as it always was.
 */
export function useHubWork(onPulled?: () => void) {
  const [view, setView] = useState<HubView | null>(null);
  const pulled = useRef(onPulled);
  pulled.current = onPulled;
  const refresh = useCallback(async () => {
    try {
      setView(await api.hubStatus());
    } catch {
      // The hub card on the start screen says what is wrong; a work screen
      // keeps working on this computer.
    }
  }, []);
  useEffect(() => {
    let live = true;
    void (async () => {
      try {
        const first = await api.hubStatus();
        if (!live) return;
        setView(first);
        if (!first.account) return;
        const synced = await api.hubSync();
        if (!live) return;
        setView(synced);
        pulled.current?.();
      } catch {
        // As above: the work stays here.
      }
    })();
    return () => {
      live = false;
    };
  }, []);
  const waiting = !!view?.account && (view.syncing || view.work.some((w) => w.state === "waiting"));
  useEffect(() => {
    if (!waiting) return;
    const timer = window.setInterval(() => void refresh(), WAITING_POLL_MS);
    return () => window.clearInterval(timer);
  }, [waiting, refresh]);
  return { view, refresh };
}

/** Where one piece of work is, or null when no hub is signed in or it was never queued. */
export function workOf(view: HubView | null, key: string): HubWorkView | null {
  if (!view?.account) return null;
  return view.work.find((w) => w.key === key) ?? null;
}

/** The words for where a piece of work is. */
export function workText(w: HubWorkView): string {
  if (w.state === "waiting") return "Saved here, will be sent to the hub";
  if (w.state === "sent") return "Sent to the hub";
  return w.message ?? "Not sent: the hub refused it. It stays on this computer.";
}

/** "Saved here, will be sent to the hub" / "Sent to the hub" for one piece of work; nothing without a hub. */
export function HubWorkNote({ view, workKey }: { view: HubView | null; workKey: string }) {
  const w = workOf(view, workKey);
  if (!w) return null;
  return (
    <span className={`small hub-work hub-work-${w.state}`} data-testid="hub-work" data-state={w.state} role="status">
      {workText(w)}
    </span>
  );
}

/** How much of a screen's work (keys starting with `prefix`) waits, in words; null when none was done. */
export function screenWorkText(view: HubView | null, prefix: string): string | null {
  const mine = (view?.work ?? []).filter((w) => w.key.startsWith(prefix));
  const waiting = mine.filter((w) => w.state === "waiting").length;
  if (waiting > 0) return `${waiting} saved here, will be sent to the hub.`;
  return mine.some((w) => w.state === "sent") ? "Everything is sent to the hub." : null;
}

/**
 * A screen's line saying that its work goes to the team hub, as whom, and
 * how much of it (keys starting with `prefix`) still waits; nothing without
 * a hub.
 */
export function HubScreenNote({ view, what, prefix }: { view: HubView | null; what: string; prefix: string }) {
  const account = view?.account;
  if (!account) return null;
  const work = screenWorkText(view, prefix);
  return (
    <p className="small hub-work-screen" data-testid="hub-screen-note">
      {what} go to the team hub as <strong>{account.name}</strong>, and are saved on this computer first.
      {work && (
        <>
          {" "}
          <span className="hub-work-count" data-testid="hub-screen-work">
            {work}
          </span>
        </>
      )}
    </p>
  );
}
