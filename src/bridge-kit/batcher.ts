import { HttpStatusError } from './client';
import type { AccountAnswer } from './session-client';

/**
 * Many accounts' bodies of one kind (reports, trades) in as few calls as fit: one call in flight at a time, each with
 * at most `maxItems()` accounts (each at most once) and `maxBytes` of bodies, the rest in the next call. A call that
 * failed on the way (network, 429, 5xx) goes again after a bounded backoff, as a single account's reports do; an
 * account's own `503` goes again in a later call; any other refusal (the whole call's or the account's) is that
 * account's HttpStatusError, for its owner to say hello again.
 */

interface Pending {
  accountId: string;
  body: unknown;
  bytes: number;
  resolve: (answer: AccountAnswer) => void;
  reject: (err: unknown) => void;
}

export interface BatcherOptions {
  what: 'reports' | 'trades';
  send: (items: { accountId: string; body: unknown }[]) => Promise<AccountAnswer[]>;
  maxItems: () => number;
  maxBytes: number;
  sleep: (ms: number) => Promise<void>;
  signal: AbortSignal;
  backoff: { initialMs: number; maxMs: number };
  diag: (line: Record<string, unknown>) => void;
}

export class CallBatcher {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  readonly stats = { calls: 0, items: 0 };

  constructor(private readonly opts: BatcherOptions) {}

  submit(accountId: string, body: unknown): Promise<AccountAnswer> {
    if (this.opts.signal.aborted) return Promise.reject(new Error(`session ${this.opts.what}: stopped`));
    return new Promise((resolve, reject) => {
      this.queue.push({ accountId, body, bytes: JSON.stringify(body).length, resolve, reject });
      this.flushing ??= this.flush().finally(() => (this.flushing = undefined));
    });
  }

  /** Rejects what waits for this account (it left the session). */
  drop(accountId: string, why: Error): void {
    for (const p of this.queue.filter((q) => q.accountId === accountId)) p.reject(why);
    this.queue = this.queue.filter((q) => q.accountId !== accountId);
  }

  private async flush(): Promise<void> {
    let delay = this.opts.backoff.initialMs;
    while (this.queue.length > 0) {
      if (this.opts.signal.aborted) {
        for (const p of this.queue.splice(0)) p.reject(new Error(`session ${this.opts.what}: stopped`));
        return;
      }
      const call = this.take();
      try {
        this.stats.calls++;
        const answers = await this.opts.send(call.map(({ accountId, body }) => ({ accountId, body })));
        this.stats.items += call.length;
        delay = this.opts.backoff.initialMs;
        const again: Pending[] = [];
        answers.forEach((answer, i) => {
          const p = call[i]!;
          if (answer.result !== 'refused') p.resolve(answer);
          else if (answer.status === 503) again.push(p);
          else p.reject(new HttpStatusError(answer.status ?? 0, `session ${this.opts.what} for ${p.accountId}`, answer));
        });
        this.queue.unshift(...again);
      } catch (err) {
        if (err instanceof HttpStatusError && err.status !== 429 && err.status < 500) {
          for (const p of call) p.reject(err);
          continue;
        }
        this.queue.unshift(...call);
        if (this.opts.signal.aborted) continue;
        this.opts.diag({
          time: new Date().toISOString(),
          event: 'session_call_retry',
          what: this.opts.what,
          accounts: call.length,
          error: (err as Error)?.message ?? String(err),
          retryInMs: delay,
        });
        await this.opts.sleep(delay);
        delay = Math.min(delay * 2, this.opts.backoff.maxMs);
      }
    }
  }

  /** The next call's items: the oldest first, each account once, within the count and the bytes (at least one). */
  private take(): Pending[] {
    const call: Pending[] = [];
    const rest: Pending[] = [];
    const seen = new Set<string>();
    let bytes = 0;
    for (const p of this.queue) {
      const fits = call.length === 0 || (call.length < this.opts.maxItems() && bytes + p.bytes <= this.opts.maxBytes);
      if (fits && !seen.has(p.accountId)) {
        call.push(p);
        seen.add(p.accountId);
        bytes += p.bytes;
      } else rest.push(p);
    }
    this.queue = rest;
    return call;
  }
}
