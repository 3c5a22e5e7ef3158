import { useMemo, useState, type KeyboardEvent } from "react";
import type { ToolInfo } from "../bindings/ToolInfo";

function score(t: ToolInfo, q: string): number {
  if (!q) return 1;
  const title = t.title.toLowerCase();
  if (title.startsWith(q)) return 4;
  if (title.includes(q)) return 3;
  if (t.name.includes(q.replace(/\s+/g, "_"))) return 2;
  if (t.description.toLowerCase().includes(q)) return 1;
  return 0;
}

export function kindLabel(t: ToolInfo): string {
  if (t.view) return "Records";
  return t.kind === "read" ? "Look up" : t.ends_episode ? "Changes records · ends the task" : "Changes records";
}

/** A record list reads "Tickets list", so it is never mistaken for the "Open ticket" tool. */
export function paletteTitle(t: ToolInfo): string {
  return t.view ? `${t.title} list` : t.title;
}

/** Searchable list of the task's tools (Ctrl+K). */
export function ToolPalette({
  tools,
  onPick,
  onClose,
}: {
  tools: ToolInfo[];
  onPick: (t: ToolInfo) => void;
  onClose: () => void;
}) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const results = useMemo(() => {
    const q = query.trim().toLowerCase();
    return tools
      .map((t) => ({ t, s: score(t, q) }))
      .filter((x) => x.s > 0)
      // Tools before record lists, whatever the match: Enter on "ticket"
      // must open the Open ticket tool, not record a read of the tickets list.
      // Within each group, the best match first.
      .sort((a, b) => Number(!!a.t.view) - Number(!!b.t.view) || b.s - a.s)
      .map((x) => x.t);
  }, [tools, query]);

  const onKey = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      setActive((a) => Math.min(results.length - 1, a + 1));
      e.preventDefault();
    } else if (e.key === "ArrowUp") {
      setActive((a) => Math.max(0, a - 1));
      e.preventDefault();
    } else if (e.key === "Enter") {
      const t = results[active];
      if (t) onPick(t);
      e.preventDefault();
    } else if (e.key === "Escape") {
      onClose();
      e.preventDefault();
    }
  };

  return (
    <div className="modal-backdrop palette-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="palette" role="dialog" aria-modal="true" aria-label="Find a tool" data-testid="palette">
        <input
          autoFocus
          className="palette-input"
          placeholder="Find a tool — type a few letters, ↑ ↓ to choose, Enter to open"
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(0);
          }}
          onKeyDown={onKey}
          aria-label="Tool name"
        />
        <ul className="palette-list" role="listbox">
          {results.map((t, i) => (
            <li
              key={t.name}
              role="option"
              aria-selected={i === active}
              className={`palette-item${i === active ? " active" : ""}`}
              onMouseEnter={() => setActive(i)}
              onMouseDown={(e) => {
                e.preventDefault();
                onPick(t);
              }}
              data-tool={t.name}
            >
              <div className="palette-item-main">
                <span className="palette-title">{paletteTitle(t)}</span>
                <span className={`chip chip-xs ${t.kind === "read" ? "chip-blue" : "chip-amber"}`}>{kindLabel(t)}</span>
              </div>
              <div className="palette-desc">{t.description}</div>
            </li>
          ))}
          {results.length === 0 && <li className="palette-empty muted">No tool matches “{query}”.</li>}
        </ul>
      </div>
    </div>
  );
}
