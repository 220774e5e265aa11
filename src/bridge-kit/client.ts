import {
  stopOutDirectiveSchema,
  type AccountFigures,
  type BridgeHello,
  type BridgeReport,
  type StopOutDirective,
  type StopOutEvent,
} from '../domain/bridge-protocol';
import type { Book, TradeEvent, TradeEventResult, TradesAnswer } from '../domain/trade-events';
import type { AccountLink } from './account-link';
import { fetchTransport, nodeHttpTransport, type Transport } from './http-transport';

/**
 * The bridge side of the bridge API over HTTP (docs/bridge-protocol.md) for one account: hello, long-poll, reports.
 * Reports are retried on network errors, 429 and 5xx with bounded backoff until the ingress takes them (they are
 * idempotent there); any other status is a lost session (the caller says hello again).
 */

export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly what: string,
    body: unknown,
  ) {
    super(`${what}: HTTP ${status} ${typeof body === 'object' && body && 'error' in body ? String(body.error) : ''}`.trim());
  }
}

export interface BridgeClientOptions {
  ingressUrl: string;
  bridgeToken: string;
  /** Tests script the ingress's answers with a fetch; a bridge calls over node:http (./http-transport.ts). */
  fetch?: typeof fetch;
  /** Aborts in-flight calls and backoff sleeps when the bridge stops. */
  signal: AbortSignal;
  backoff?: { initialMs?: number; maxMs?: number };
  /** Whose bridge this is, in diagnostics. */
  accountId: string;
  /** Diagnostics (JSON lines): `report_retry`, `report_unknown_command`. */
  diag: (line: Record<string, unknown>) => void;
}

export class BridgeClient implements AccountLink {
  private readonly transport: Transport;
  readonly initialBackoff: number;
  readonly maxBackoff: number;

  constructor(private readonly opts: BridgeClientOptions) {
    this.transport = opts.fetch ? fetchTransport(opts.fetch) : nodeHttpTransport();
    this.initialBackoff = opts.backoff?.initialMs ?? 50;
    this.maxBackoff = opts.backoff?.maxMs ?? 1000;
  }

  async hello(body: BridgeHello): Promise<{ accountId?: string }> {
    const res = await this.call('POST', '/bridge/v1/hello', body, 10_000);
    if (res.status !== 200) throw new HttpStatusError(res.status, 'hello', res.body);
    this.takeArming(res.body);
    return res.body ?? {};
  }

  /**
   * One long-poll; the commands in `seq` order. A poll ended by a newer one (`superseded`) is normal once (a hanging
   * poll of ours after a reconnect); repeated, another bridge shares the token: logged, and this one backs off.
   */
  async poll(waitMs: number): Promise<unknown[]> {
    const res = await this.call('GET', `/bridge/v1/commands?waitMs=${waitMs}`, undefined, waitMs + 15_000);
    if (res.status !== 200) throw new HttpStatusError(res.status, 'commands', res.body);
    const body = res.body as { commands?: unknown; superseded?: unknown } | undefined;
    const commands = body?.commands;
    if (!Array.isArray(commands)) throw new Error('commands: the response has no commands array');
    this.takeArming(body);
    if (body?.superseded === true) {
      this.superseded++;
      if (this.superseded > 1) {
        const backoff = Math.min(this.initialBackoff * 2 ** this.superseded, 30_000);
        this.opts.diag({
          time: new Date().toISOString(),
          event: 'poll_superseded',
          accountId: this.opts.accountId,
          times: this.superseded,
          retryInMs: backoff,
          hint: 'another bridge uses this token',
        });
        await this.sleep(backoff);
      }
    } else {
      this.superseded = 0;
    }
    return (commands as unknown[]).slice().sort((a, b) => seqOf(a) - seqOf(b));
  }

  private superseded = 0;

  /**
   * The stop-out as the service's last answer armed it (protocol 1.4): undefined when that answer had no `stopOut`.
   * One the bridge cannot read disarms it too, and says so.
   */
  arming: StopOutDirective | undefined;

  private takeArming(body: unknown): void {
    const raw = typeof body === 'object' && body !== null ? (body as { stopOut?: unknown }).stopOut : undefined;
    const parsed = raw === undefined ? undefined : stopOutDirectiveSchema.safeParse(raw);
    if (parsed && !parsed.success)
      this.opts.diag({ time: new Date().toISOString(), event: 'stop_out_unreadable', accountId: this.opts.accountId, error: parsed.error.message });
    this.arming = parsed?.success ? parsed.data : undefined;
  }

  /** Sends events (protocol 1.4) with the figures; the eventIds the service acknowledged (recorded or duplicate). */
  async sendEvents(events: StopOutEvent[], account?: AccountFigures): Promise<string[]> {
    const res = await this.call('POST', '/bridge/v1/reports', { reports: [], events, ...(account ? { account } : {}) }, 15_000);
    if (res.status !== 200) throw new HttpStatusError(res.status, 'events', res.body);
    return acknowledgedEvents(res.body);
  }

  /**
   * One call of trade events and/or the book (protocol 1.5). Not retried here: the caller's outbox keeps the events
   * and sends them again; any answer but 200 is an HttpStatusError (a 400 names the path the service could not read).
   */
  async sendTrades(body: { events: TradeEvent[]; book?: Book; account?: AccountFigures }): Promise<TradesAnswer> {
    const res = await this.call('POST', '/bridge/v1/trades', body, 15_000);
    if (res.status !== 200) throw new HttpStatusError(res.status, 'trades', res.body);
    return tradesAnswerOf(res.body);
  }

  /** The reports, with the account's figures now (protocol 1.2); no report and only figures is a heartbeat. */
  async sendReports(reports: BridgeReport[], account?: AccountFigures): Promise<void> {
    for (let i = 0; i < Math.max(reports.length, account ? 1 : 0); i += 100) {
      const chunk = reports.slice(i, i + 100);
      let delay = this.initialBackoff;
      for (;;) {
        try {
          const res = await this.call('POST', '/bridge/v1/reports', { reports: chunk, ...(account ? { account } : {}) }, 15_000);
          if (res.status === 200) {
            const results = (res.body as { results?: { commandId: string; result: string }[] } | undefined)?.results ?? [];
            for (const r of results) {
              if (r.result === 'unknown')
                this.opts.diag({ time: new Date().toISOString(), event: 'report_unknown_command', accountId: this.opts.accountId, commandId: r.commandId });
            }
            break;
          }
          if (res.status !== 429 && res.status < 500) throw new HttpStatusError(res.status, 'reports', res.body);
          throw new Error(`reports: HTTP ${res.status}`);
        } catch (err) {
          if (this.opts.signal.aborted || err instanceof HttpStatusError) throw err;
          this.opts.diag({
            time: new Date().toISOString(),
            event: 'report_retry',
            accountId: this.opts.accountId,
            error: (err as Error)?.message ?? String(err),
            retryInMs: delay,
          });
          await this.sleep(delay);
          if (this.opts.signal.aborted) throw err;
          delay = Math.min(delay * 2, this.maxBackoff);
        }
      }
    }
  }

  sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.opts.signal);
  }

  private async call(method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number): Promise<{ status: number; body: unknown }> {
    const signal = AbortSignal.any([this.opts.signal, AbortSignal.timeout(timeoutMs)]);
    const res = await this.transport({
      method,
      url: `${this.opts.ingressUrl.replace(/\/+$/, '')}${path}`,
      headers: {
        authorization: `Bearer ${this.opts.bridgeToken}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal,
    });
    const text = res.text;
    if (res.status === 429) {
      // The token's request budget is spent: wait as long as the ingress says before anyone retries.
      const seconds = Number(res.retryAfter);
      const waitMs = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 300) * 1000 : this.maxBackoff;
      this.opts.diag({ time: new Date().toISOString(), event: 'rate_limited', accountId: this.opts.accountId, path, retryInMs: waitMs });
      await this.sleep(waitMs);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed };
  }
}

/** The eventIds a reports answer acknowledged (recorded or duplicate), from one account's answer. */
export function acknowledgedEvents(body: unknown): string[] {
  const acks = (body as { events?: { eventId?: unknown; result?: unknown }[] } | undefined)?.events;
  return (Array.isArray(acks) ? acks : []).filter((a) => a.result === 'recorded' || a.result === 'duplicate').map((a) => String(a.eventId));
}

/** A trades call's answer for one account, as far as the bridge reads it. */
export function tradesAnswerOf(body: unknown): TradesAnswer {
  const answer = body as { events?: unknown; book?: unknown; bookRefusal?: TradesAnswer['bookRefusal'] } | undefined;
  const events = (Array.isArray(answer?.events) ? answer.events : []).filter(
    (e): e is TradeEventResult => typeof e === 'object' && e !== null && typeof (e as { eventId?: unknown }).eventId === 'string',
  );
  if (answer?.book === 'refused') return { events, book: 'refused', ...(answer.bookRefusal ? { bookRefusal: answer.bookRefusal } : {}) };
  return { events, book: answer?.book === 'recorded' ? 'recorded' : 'absent' };
}

/** Waits `ms`, or less when the signal aborts (a stopping bridge does not sit out its backoff). */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

function seqOf(raw: unknown): number {
  const seq = (raw as { seq?: unknown } | null)?.seq;
  return typeof seq === 'number' ? seq : Number.MAX_SAFE_INTEGER;
}

/** The commandId of a delivered command, if it has a usable one. */
export function commandIdOf(raw: unknown): string | undefined {
  const id = typeof raw === 'object' && raw !== null ? (raw as { commandId?: unknown }).commandId : undefined;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}

/** What a bridge decided about one command, before it becomes a report. */
export interface CommandOutcome {
  status: BridgeReport['status'];
  ticket?: string | null;
  price?: number | null;
  volume?: number | null;
  retcode?: string | number | null;
  message?: string | null;
}

export function toReport(commandId: string, o: CommandOutcome, executedAt: number): BridgeReport {
  return {
    commandId,
    status: o.status,
    ticket: o.ticket ?? null,
    price: o.price ?? null,
    volume: o.volume ?? null,
    retcode: o.retcode ?? null,
    message: o.message == null ? null : o.message.slice(0, 512),
    executedAt: new Date(executedAt).toISOString(),
  };
}
