import {
  flexRender,
  getCoreRowModel,
  useReactTable,
  type ColumnDef,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { StepView } from "../bindings/StepView";
import type { ViewInfo } from "../bindings/ViewInfo";
import type { ViewListing } from "../bindings/ViewListing";
import { columnLabel, plainStepError } from "../lib/errors";
import { cell } from "../lib/format";
import { moveBetweenTabs } from "../lib/tabs";
import { DataView } from "./StepResult";

type Row = Record<string, unknown>;
type Args = Record<string, unknown>;

export const PAGE_SIZE = 200;

/** A listing step's content has this shape (the engine's, generated). */
function isListing(v: unknown): v is ViewListing {
  return !!v && typeof v === "object" && Array.isArray((v as ViewListing).rows) && Array.isArray((v as ViewListing).columns);
}

/** The latest kept listing and opened record of a view, from the steps: the
 * record tables show exactly what the expert's recorded look-ups returned. */
export function viewState(steps: StepView[], view: ViewInfo) {
  let listing: StepView | undefined;
  let record: StepView | undefined;
  for (const s of steps) {
    if (s.retracted || !("tool" in s.action) || s.action.tool !== view.tool) continue;
    if ("key" in s.action.args) record = s;
    else listing = s;
  }
  return { listing, record };
}

function columnWidth(name: string, label: string, rows: Row[]): number {
  const sample = rows.slice(0, 50).map((r) => cell(r[name]).length);
  const longest = Math.max(label.length + 2, ...sample);
  return Math.round(Math.min(320, Math.max(84, longest * 7.4 + 24)));
}

function VirtualTable({
  listing,
  view,
  args,
  onSort,
  onOpen,
  onFilter,
  disabled,
  selectedKey,
  hidden,
}: {
  listing: ViewListing;
  view: ViewInfo;
  /** Columns the expert chose not to see (display only: the look-up is the same). */
  hidden: string[];
  args: Args;
  onSort: (column: string) => void;
  onOpen: (row: Row) => void;
  onFilter: (filter: Record<string, string>) => void;
  disabled: boolean;
  selectedKey: unknown;
}) {
  const shown = useMemo(() => listing.columns.filter((c) => !hidden.includes(c)), [listing, hidden]);
  const [filters, setFilters] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries((args.filter as Record<string, unknown>) ?? {}).map(([k, v]) => [k, String(v)])),
  );
  const columns = useMemo<ColumnDef<Row>[]>(
    () =>
      shown.map((c) => ({
        id: c,
        accessorFn: (r: Row) => r[c],
        header: columnLabel(c, view.labels),
        size: columnWidth(c, columnLabel(c, view.labels), listing.rows),
        cell: (info) => cell(info.getValue()),
      })),
    [listing, shown, view],
  );
  const table = useReactTable({ data: listing.rows, columns, getCoreRowModel: getCoreRowModel() });
  const scrollRef = useRef<HTMLDivElement>(null);
  const rows = table.getRowModel().rows;
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 34,
    overscan: 12,
    initialRect: { width: 800, height: 400 },
  });
  const template = columns.map((c) => `${c.size}px`).join(" ");
  const width = columns.reduce((s, c) => s + (c.size ?? 100), 0);
  const sort = args.sort as string | undefined;
  const descending = !!args.descending;

  const onRowKey = (e: KeyboardEvent<HTMLDivElement>, row: Row, index: number) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      onOpen(row);
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const next = index + (e.key === "ArrowDown" ? 1 : -1);
      if (next < 0 || next >= rows.length) return;
      virtualizer.scrollToIndex(next);
      requestAnimationFrame(() =>
        scrollRef.current?.querySelector<HTMLElement>(`[data-index="${next}"]`)?.focus(),
      );
    }
  };

  return (
    <div className="vtable" ref={scrollRef} data-testid={`table-${view.name}`}>
      <div className="vtable-inner" style={{ width }}>
        <div className="vtable-head" role="row" style={{ gridTemplateColumns: template }}>
          {table.getHeaderGroups()[0]?.headers.map((h) => (
            <button
              key={h.id}
              type="button"
              role="columnheader"
              className={`vtable-th${sort === h.id ? " sorted" : ""}`}
              onClick={() => onSort(h.id)}
              disabled={disabled}
              title={`Sort by ${columnLabel(h.id, view.labels)}`}
              aria-sort={sort === h.id ? (descending ? "descending" : "ascending") : "none"}
            >
              {flexRender(h.column.columnDef.header, h.getContext())}
              <span className="sort-mark" aria-hidden="true">
                {sort === h.id ? (descending ? "↓" : "↑") : ""}
              </span>
            </button>
          ))}
        </div>
        <div className="vtable-filters" style={{ gridTemplateColumns: template }}>
          {shown.map((c) => (
            <input
              key={c}
              className="vtable-filter"
              aria-label={`Filter ${columnLabel(c, view.labels)} (exact match, Enter to apply)`}
              placeholder="equals…"
              value={filters[c] ?? ""}
              disabled={disabled}
              onChange={(e) => setFilters({ ...filters, [c]: e.target.value })}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  e.preventDefault();
                  onFilter(Object.fromEntries(Object.entries(filters).filter(([, v]) => v.trim() !== "")));
                }
              }}
            />
          ))}
        </div>
        <div className="vtable-body" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index];
            if (!row) return null;
            const key = view.key ? row.original[view.key] : undefined;
            const selected = key !== undefined && key === selectedKey;
            return (
              <div
                key={row.id}
                data-index={item.index}
                role="row"
                // One tab stop for the whole list (the open record's row, else
                // the first); the arrow keys move between rows.
                tabIndex={selected || (selectedKey === undefined && item.index === 0) ? 0 : -1}
                className={`vtable-row${selected ? " selected" : ""}${view.has_record ? " clickable" : ""}`}
                style={{ gridTemplateColumns: template, transform: `translateY(${item.start}px)` }}
                onClick={() => !disabled && view.has_record && onOpen(row.original)}
                onKeyDown={(e) => !disabled && view.has_record && onRowKey(e, row.original, item.index)}
                data-key={key === undefined ? undefined : String(key)}
              >
                {row.getVisibleCells().map((c) => (
                  <div key={c.id} role="cell" className="vtable-td" title={cell(c.getValue())}>
                    {flexRender(c.column.columnDef.cell, c.getContext())}
                  </div>
                ))}
              </div>
            );
          })}
        </div>
        {listing.rows.length === 0 && <p className="muted small vtable-empty">No records match.</p>}
      </div>
    </div>
  );
}

/** Which columns of a wide list to show. Hiding one changes only the
 * screen: the look-up, and what it returned, stay as recorded. */
function ColumnChooser({
  columns,
  labels,
  hidden,
  onHidden,
}: {
  columns: string[];
  labels: Record<string, string>;
  hidden: string[];
  onHidden: (hidden: string[]) => void;
}) {
  return (
    <details className="column-chooser" data-testid="column-chooser">
      <summary className="btn btn-ghost btn-sm">
        Columns{hidden.length ? ` (${columns.length - hidden.length} of ${columns.length})` : ""}
      </summary>
      <div className="column-menu" role="group" aria-label="Columns to show">
        {columns.map((c) => {
          const on = !hidden.includes(c);
          return (
            <label key={c} className="column-option">
              <input
                type="checkbox"
                checked={on}
                // The last shown column stays: an empty table helps nobody.
                disabled={on && hidden.length === columns.length - 1}
                onChange={() => onHidden(on ? [...hidden, c] : hidden.filter((h) => h !== c))}
                data-column={c}
              />
              {columnLabel(c, labels)}
            </label>
          );
        })}
      </div>
    </details>
  );
}

/** The world's views as tables. Opening, searching, sorting, paging and
 * opening a record are each a recorded look-up (a `view_*` step). */
export function Records({
  views,
  steps,
  disabled,
  busy,
  onRun,
  active,
  onActive,
}: {
  views: ViewInfo[];
  steps: StepView[];
  disabled: boolean;
  busy: boolean;
  onRun: (tool: string, args: Args) => void;
  active: string | null;
  onActive: (name: string) => void;
}) {
  const view = views.find((v) => v.name === active) ?? null;
  const state = view ? viewState(steps, view) : { listing: undefined, record: undefined };
  const [closedRecord, setClosedRecord] = useState<number | null>(null);
  const args: Args = state.listing && "tool" in state.listing.action ? state.listing.action.args : {};
  const [search, setSearch] = useState("");
  const [hidden, setHidden] = useState<Record<string, string[]>>({});
  useEffect(() => setSearch(typeof args.search === "string" ? args.search : ""), [state.listing?.idx]);

  const list = (extra: Args) => {
    if (!view) return;
    const next: Args = { ...args, limit: PAGE_SIZE, ...extra };
    for (const k of Object.keys(next)) if (next[k] === undefined || next[k] === "") delete next[k];
    if (next.offset === 0) delete next.offset;
    onRun(view.tool, next);
  };

  const openTab = (v: ViewInfo) => {
    onActive(v.name);
    if (!viewState(steps, v).listing && !disabled) onRun(v.tool, { limit: PAGE_SIZE });
  };

  const listingData = state.listing?.ok && isListing(state.listing.content) ? state.listing.content : null;
  const record = state.record && state.record.idx !== closedRecord ? state.record : undefined;
  const offset = typeof args.offset === "number" ? args.offset : 0;

  return (
    <section className="panel records" aria-labelledby="records-title" data-testid="records">
      <header className="panel-header records-header">
        <h2 id="records-title" className="panel-title">
          Records
        </h2>
        <div
          className="tabs"
          role="tablist"
          aria-label="Record lists"
          onKeyDown={(e) => {
            const moved = moveBetweenTabs(e);
            if (!moved && e.key === "ArrowDown") {
              // Down from a list's tab: its first row (no Tab key marathon through the toolbar).
              const first = e.currentTarget
                .closest(".records")
                ?.querySelector<HTMLElement>('.vtable-row[tabindex="0"], .vtable-row');
              if (first) {
                e.preventDefault();
                first.focus();
              }
            }
          }}
        >
          {views.map((v) => (
            <button
              key={v.name}
              type="button"
              role="tab"
              aria-selected={v.name === active}
              className={`tab${v.name === active ? " active" : ""}`}
              onClick={() => openTab(v)}
              disabled={disabled && !viewState(steps, v).listing}
              data-view={v.name}
              tabIndex={v.name === active || (!active && v === views[0]) ? 0 : -1}
              title={v.description}
            >
              {v.title}
            </button>
          ))}
        </div>
      </header>
      {!view && (
        <div className="records-empty">
          <p>Open a list to look through the company's records.</p>
          <p className="muted small">Each list you open, search or sort is saved as a look-up, like the tools.</p>
        </div>
      )}
      {view && (
        <div className="records-body">
          <div className="records-main">
            <div className="records-toolbar">
              <input
                type="search"
                className="search"
                placeholder={`Search ${view.title.toLowerCase()}… (Enter)`}
                aria-label={`Search ${view.title}`}
                value={search}
                disabled={disabled}
                onChange={(e) => setSearch(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === "Enter") {
                    e.preventDefault();
                    list({ search: search.trim() || undefined, offset: 0 });
                  }
                }}
                data-testid="records-search"
              />
              {listingData && (
                <span className="muted small nowrap">
                  {listingData.total === 0
                    ? "No records"
                    : `${offset + 1}–${offset + listingData.rows.length} of ${listingData.total}`}
                </span>
              )}
              {listingData && listingData.columns.length > 4 && (
                <ColumnChooser
                  columns={listingData.columns}
                  labels={view.labels}
                  hidden={hidden[view.name] ?? []}
                  onHidden={(h) => setHidden({ ...hidden, [view.name]: h })}
                />
              )}
              <div className="row gap-xs">
                <button
                  type="button"
                  className="btn btn-ghost btn-sm"
                  disabled={disabled || busy || offset === 0}
                  onClick={() => list({ offset: Math.max(0, offset - PAGE_SIZE) })}
                >
                  Previous
                </button>
                <button
                  type="button"
                  className="btn btn-ghost btn-sm"
                  disabled={disabled || busy || !listingData || offset + listingData.rows.length >= listingData.total}
                  onClick={() => list({ offset: offset + PAGE_SIZE })}
                >
                  Next
                </button>
                <button
                  type="button"
                  className="btn btn-ghost btn-sm"
                  disabled={disabled || busy}
                  onClick={() => list({})}
                  title="Look again: the records may have changed"
                >
                  Refresh
                </button>
              </div>
            </div>
            {view.expert_only && (
              <p className="muted small records-note" data-testid="expert-only">
                Only you see this list; an AI agent doing this task is not given it. What you open here is saved as a look-up.
              </p>
            )}
            {state.listing && !state.listing.ok && state.listing.error && (
              <div className="result result-error">{plainStepError(state.listing.error).explanation}</div>
            )}
            {!state.listing && <p className="muted small pad">{busy ? "Opening…" : "Not opened yet."}</p>}
            {listingData && (
              <VirtualTable
                key={state.listing?.idx}
                listing={listingData}
                view={view}
                args={args}
                disabled={disabled || busy}
                selectedKey={record && "tool" in record.action ? record.action.args.key : undefined}
                hidden={hidden[view.name] ?? []}
                onSort={(c) => list({ sort: c, descending: args.sort === c ? !args.descending : false, offset: 0 })}
                onFilter={(f) => list({ filter: Object.keys(f).length ? f : undefined, offset: 0 })}
                onOpen={(row) => {
                  if (!view.key) return;
                  setClosedRecord(null);
                  onRun(view.tool, { key: row[view.key] });
                }}
              />
            )}
          </div>
          {record && (
            <aside className="record-panel" aria-label="Record" data-testid="record-panel">
              <header className="record-panel-header">
                <div>
                  <div className="eyebrow">{view.title}</div>
                  <h3>{"tool" in record.action ? String(record.action.args.key) : ""}</h3>
                </div>
                <button type="button" className="btn btn-ghost btn-sm" onClick={() => setClosedRecord(record.idx)}>
                  Close
                </button>
              </header>
              {record.ok ? (
                <DataView value={record.content} labels={view.labels} />
              ) : (
                record.error && <p className="result-explanation">{plainStepError(record.error).explanation}</p>
              )}
            </aside>
          )}
        </div>
      )}
    </section>
  );
}
