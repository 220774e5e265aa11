import fs from 'node:fs';
import { writeFileWhole } from './durable-file';
import type { TradeEvent, TradeEventResult } from '../domain/trade-events';

/**
 * A bridge's trade events from the moment it saw them until the service answered `recorded`, `duplicate` or
 * `refused` (protocol 1.5, docs/bridge-protocol.md "Trade events"): kept in order in a file of its own, written whole
 * and durably (temporary file, fsync, rename) before `add` returns, so a bridge that dies right after a broker
 * operation sends its events after the restart. Without a file (tests, a bridge with no files) it lives in memory.
 *
 * Bounded: at most `max` events wait; past that the oldest are dropped and said so (`trade_outbox_full`): the book
 * the bridge sends at least every minute still lets the service reconcile what those events would have told.
 * The last REMEMBERED_IDS settled eventIds are kept too, so an event seen again after a restart (a broker operation
 * replayed because the bridge died before saving its state) is not queued twice.
 */

const OUTBOX_MAX_EVENTS = 5_000;
const REMEMBERED_IDS = 1_000;

interface OutboxFile {
  version: 1;
  events: TradeEvent[];
  settled: string[];
}

export interface TradeOutboxOptions {
  /** Where the outbox lives (e.g. beside the bridge's journal); undefined: in memory. */
  file?: string;
  accountId: string;
  max?: number;
  /** Diagnostics (JSON lines): `trade_outbox_full`, `trade_event_refused`, `trade_event_dropped`. */
  diag?: (line: Record<string, unknown>) => void;
  clock?: () => number;
}

export class TradeOutbox {
  private events: TradeEvent[];
  private settled: string[];
  private readonly max: number;

  constructor(private readonly opts: TradeOutboxOptions) {
    this.max = opts.max ?? OUTBOX_MAX_EVENTS;
    const saved = opts.file ? readOutbox(opts.file) : undefined;
    this.events = saved?.events ?? [];
    this.settled = saved?.settled ?? [];
  }

  /** The events still to send, oldest first. */
  pending(): TradeEvent[] {
    return this.events.slice();
  }

  get size(): number {
    return this.events.length;
  }

  /** Queues the events not already waiting or settled, in their order, and writes the outbox before returning. */
  add(events: readonly TradeEvent[]): number {
    const known = new Set([...this.events.map((e) => e.eventId), ...this.settled]);
    const fresh: TradeEvent[] = [];
    for (const e of events) {
      if (known.has(e.eventId)) continue;
      known.add(e.eventId);
      fresh.push(e);
    }
    if (fresh.length === 0) return 0;
    this.events.push(...fresh);
    const over = this.events.length - this.max;
    if (over > 0) {
      const dropped = this.events.splice(0, over);
      this.diagnose('trade_outbox_full', { dropped: dropped.length, firstDropped: dropped[0]!.eventId, max: this.max });
    }
    this.save();
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
    const before = this.events.length;
    this.events = this.events.filter((e) => !ids.has(e.eventId));
    const removed = before - this.events.length;
    if (removed === 0) return 0;
    this.settled = [...this.settled.filter((id) => !ids.has(id)), ...ids].slice(-REMEMBERED_IDS);
    this.save();
    return removed;
  }

  private save(): void {
    if (!this.opts.file) return;
    const content: OutboxFile = { version: 1, events: this.events, settled: this.settled };
    writeFileWhole(this.opts.file, JSON.stringify(content), { durable: true });
  }

  private diagnose(event: string, detail: Record<string, unknown>): void {
    this.opts.diag?.({ time: new Date((this.opts.clock ?? Date.now)()).toISOString(), event, accountId: this.opts.accountId, ...detail });
  }
}

/** A missing file is an empty outbox; one that does not read is refused (starting empty would lose its events). */
function readOutbox(file: string): OutboxFile | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: Partial<OutboxFile>;
  try {
    parsed = JSON.parse(text) as Partial<OutboxFile>;
  } catch (err) {
    throw new Error(`trade outbox ${file} does not parse (${(err as Error).message}); move it aside to start without its events`, { cause: err });
  }
  if (parsed.version !== 1 || !Array.isArray(parsed.events) || !Array.isArray(parsed.settled))
    throw new Error(`trade outbox ${file} is not a version 1 outbox; move it aside to start without its events`);
  return { version: 1, events: parsed.events, settled: parsed.settled.filter((s): s is string => typeof s === 'string') };
}
