import { keysOf, SHORTCUTS, type ShortcutName } from "../lib/shortcuts";

export function Kbd({ keys }: { keys: string[] }) {
  return (
    <span className="kbd-group" aria-hidden="true">
      {keys.map((k) => (
        <kbd key={k} className="kbd">
          {k}
        </kbd>
      ))}
    </span>
  );
}

/** The keys of a named shortcut, as shown next to buttons. */
export function ShortcutKeys({ name }: { name: ShortcutName }) {
  return <Kbd keys={keysOf(SHORTCUTS[name])} />;
}
