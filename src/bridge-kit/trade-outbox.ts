import fs from 'node:fs';
import { writeFileWhole } from './durable-file';
import type { TradeEvent, TradeEventResult } from '../domain/trade-events';

/**
 * A bridge's trade events from the moment it saw them until the service answered `recorded`, `duplicate` or
 * `refused` (protocol 1.5, docs/bridge-protocol.md "Trade events"): kept in order in a file of its own, durable before
 * `add` returns, so a bridge that dies right after a broker operation sends its events after the restart. Without a
 * file (tests, a bridge with no files) it lives in memory.
 *
 * The file is a log (one JSON line per change): `add` appends its events and fdatasyncs, one flush on a command's path
 * and no rename; a settlement is appended without a flush, because a settlement lost with the machine only sends
 * those events again, which the service answers `duplicate`. Past COMPACT_AFTER_LINES lines the log is rewritten
 * whole and durably with what is still true. One process serves many accounts (the paper bridge, the cTrader
 * connector), so each flush it does not make is time no other account's command waits.
 *
 * Bounded: at most `max` events wait; past that the oldest are dropped and said so (`trade_outbox_full`): the book
 * the bridge sends at least every minute still lets the service reconcile what those events would have told.
 * The last REMEMBERED_IDS settled eventIds are kept too, so an event seen again after a restart (a broker operation
 * replayed because the bridge died before saving its state) is not queued twice.
 */

const OUTBOX_MAX_EVENTS = 5_000;
const REMEMBERED_IDS = 1_000;
const COMPACT_AFTER_LINES = 500;

/**
 * One line of the log: events added, events settled, or (written by a compaction) the settled ids remembered. A file
 * written before 2026-11-28 is one `{version: 1, events, settled}` object, read as such.
 */
type OutboxLine = { add: TradeEvent[] } | { settled: string[] } | { remembered: string[] };

export interface TradeOutboxOptions {
  /** Where the outbox lives (e.g. beside the bridge's journal); undefined: in memory. */
  file?: string;
  accountId: string;
  max?: number;
  /** Diagnostics (JSON lines): `trade_outbox_full`, `trade_event_refused`, `trade_event_dropped`. */
  diag?: (line: Record<string, unknown>) => void;
  clock?: () => number;
}

/** What the outbox holds: the events waiting, oldest first, and the eventIds settled lately. */
interface OutboxState {
  events: TradeEvent[];
  settled: string[];
}

/** Queues the events not already waiting or settled; the oldest beyond `max` are dropped (returned). */
function applyAdd(state: OutboxState, events: readonly TradeEvent[], max: number): { fresh: TradeEvent[]; dropped: TradeEvent[] } {
  const known = new Set([...state.events.map((e) => e.eventId), ...state.settled]);
  const fresh: TradeEvent[] = [];
  for (const e of events) {
    if (known.has(e.eventId)) continue;
    known.add(e.eventId);
    fresh.push(e);
  }
  state.events.push(...fresh);
  const over = state.events.length - max;
  return { fresh, dropped: over > 0 ? state.events.splice(0, over) : [] };
}

/** Takes these eventIds off the waiting events and remembers them as settled; answers how many were waiting. */
function applySettled(state: OutboxState, ids: ReadonlySet<string>): number {
  const before = state.events.length;
  state.events = state.events.filter((e) => !ids.has(e.eventId));
  const removed = before - state.events.length;
  if (removed > 0) state.settled = [...state.settled.filter((id) => !ids.has(id)), ...ids].slice(-REMEMBERED_IDS);
  return removed;
}

export class TradeOutbox {
  private state: OutboxState = { events: [], settled: [] };
  private readonly max: number;
  /** Lines in the file now: past COMPACT_AFTER_LINES it is rewritten. */
  private lines = 0;

  constructor(private readonly opts: TradeOutboxOptions) {
    this.max = opts.max ?? OUTBOX_MAX_EVENTS;
    if (!opts.file) return;
    const saved = readOutbox(opts.file, this.max);
    if (saved) this.state = saved.state;
    // The cut piece goes, so the next append starts a line of its own.
    if (saved?.cut !== undefined) fs.truncateSync(opts.file, saved.cut);
    // A new file, or one of the whole-object format: written as a log now, durably (the directory entry too).
    if (!saved || saved.legacy) this.compact();
    else this.lines = saved.lines;
  }

  /** The events still to send, oldest first. */
  pending(): TradeEvent[] {
    return this.state.events.slice();
  }

  get size(): number {
    return this.state.events.length;
  }

  /** Queues the events not already waiting or settled, in their order, and makes them durable before returning. */
  add(events: readonly TradeEvent[]): number {
    const { fresh, dropped } = applyAdd(this.state, events, this.max);
    if (fresh.length === 0) return 0;
    if (dropped.length > 0) this.diagnose('trade_outbox_full', { dropped: dropped.length, firstDropped: dropped[0]!.eventId, max: this.max });
    this.append({ add: fresh }, true);
    return fresh.length;
  }

  /** Takes the events the service answered for good (recorded, duplicate, refused) off the outbox. */
  settle(results: readonly TradeEventResult[]): number {
    const done = new Set<string>();
    for (const r of results) {
      if (r.result !== 'recorded' && r.result !== 'duplicate' && r.result !== 'refused') continue;
      done.add(r.eventId);
      if (r.result === 'refused') this.diagnose('trade_event_refused', { eventId: r.eventId, reason: r.reason ?? null });
    }
    return this.remove(done);
  }

  /** Gives up on one event the service cannot read (a 400 for it alone): kept, it would block every later one. */
  drop(eventId: string, why: string): void {
    if (this.remove(new Set([eventId])) > 0) this.diagnose('trade_event_dropped', { eventId, error: why.slice(0, 500) });
  }

  private remove(ids: Set<string>): number {
    const removed = applySettled(this.state, ids);
    if (removed === 0) return 0;
    this.append({ settled: [...ids] }, false);
    return removed;
  }

  private append(line: OutboxLine, durable: boolean): void {
    if (!this.opts.file) return;
    if (this.lines >= COMPACT_AFTER_LINES) {
      this.compact();
      return;
    }
    const fd = fs.openSync(this.opts.file, 'a', 0o600);
    try {
      fs.writeSync(fd, `${JSON.stringify(line)}\n`);
      if (durable) fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    this.lines++;
  }

  /** The log rewritten whole with what is true now: the waiting events and the settled ids (temporary file, fsync, rename). */
  private compact(): void {
    if (!this.opts.file) return;
    const lines: OutboxLine[] = [];
    if (this.state.events.length > 0) lines.push({ add: this.state.events });
    if (this.state.settled.length > 0) lines.push({ remembered: this.state.settled });
    writeFileWhole(this.opts.file, lines.map((l) => `${JSON.stringify(l)}\n`).join(''), { durable: true });
    this.lines = lines.length;
  }

  private diagnose(event: string, detail: Record<string, unknown>): void {
    this.opts.diag?.({ time: new Date((this.opts.clock ?? Date.now)()).toISOString(), event, accountId: this.opts.accountId, ...detail });
  }
}

/** The events an outbox file holds, read without changing it (a bridge may be writing it): for tests and diagnosis. */
export function pendingInFile(file: string): TradeEvent[] {
  return readOutbox(file, OUTBOX_MAX_EVENTS)?.state.events ?? [];
}

const unreadable = (file: string, why: string, cause?: unknown) =>
  new Error(`trade outbox ${file} ${why}; move it aside to start without its events`, cause === undefined ? undefined : { cause });

/**
 * The outbox as its file says: a missing file is an empty outbox. A log's last piece without its newline is an append
 * the crash cut short, never acknowledged, so it is left out (`cut`: the length without it); any other line that does not read refuses the file
 * (starting empty would lose its events), as does a whole-object file that does not read.
 */
function readOutbox(file: string, max: number): { state: OutboxState; lines: number; legacy: boolean; cut?: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (text.startsWith('{"version"') && !text.includes('\n')) return { state: legacyState(file, text), lines: 0, legacy: true };
  const state: OutboxState = { events: [], settled: [] };
  const complete = text.split('\n').slice(0, -1);
  for (const [i, raw] of complete.entries()) {
    let line: Partial<{ add: unknown; settled: unknown; remembered: unknown }>;
    try {
      line = JSON.parse(raw) as typeof line;
    } catch (err) {
      throw unreadable(file, `does not parse at line ${i + 1} (${(err as Error).message})`, err);
    }
    if (Array.isArray(line.add)) applyAdd(state, line.add as TradeEvent[], max);
    else if (Array.isArray(line.settled)) applySettled(state, new Set(strings(line.settled)));
    else if (Array.isArray(line.remembered)) state.settled = strings(line.remembered).slice(-REMEMBERED_IDS);
    else throw unreadable(file, `has a line ${i + 1} that is neither events nor settlements`);
  }
  const whole = complete.length === 0 ? 0 : Buffer.byteLength(`${complete.join('\n')}\n`);
  return { state, lines: complete.length, legacy: false, cut: whole < Buffer.byteLength(text) ? whole : undefined };
}

function legacyState(file: string, text: string): OutboxState {
  let parsed: Partial<{ version: number; events: TradeEvent[]; settled: unknown[] }>;
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (err) {
    throw unreadable(file, `does not parse (${(err as Error).message})`, err);
  }
  if (parsed.version !== 1 || !Array.isArray(parsed.events) || !Array.isArray(parsed.settled)) throw unreadable(file, 'is not a version 1 outbox');
  return { events: parsed.events, settled: strings(parsed.settled) };
}

const strings = (values: unknown[]): string[] => values.filter((s): s is string => typeof s === 'string');
