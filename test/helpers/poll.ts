/**
 * The one "poll GET /v1/signals/:id until reported" of the tests (docs/testing.md: one helper per job). Every suite
 * waits on it, in-process stacks and process stacks alike, one signal or a burst.
 */
import type { AccountOutcome } from '../../src/domain/outcome';
import { get } from '../../support/http';
import { waitFor } from '../../support/infra';

/** The poll's 200 body (spec §4.3); `accounts` are the reported ones. */
export interface SignalStatus {
  signalId: string;
  status: string;
  reported: number;
  accounts: AccountOutcome[];
  [field: string]: unknown;
}

export interface PollOptions {
  /** Reported accounts each signal must show (default 1). */
  count?: number;
  /** One deadline for all the signals (default 15 s). */
  deadlineMs?: number;
  /** Polls in flight at once, for a burst (default 16). */
  concurrency?: number;
  intervalMs?: number;
  /** Appended to the failure message: where the processes stand. */
  describe?: () => string;
}

/** The poll answers that asked for a retry, per call (for a fault scenario's report line). */
export const pollRetries: Record<number, number>[] = [];

/**
 * Polls every signal until each shows `count` reported accounts, within one deadline for all. A 503 (or the poll's
 * "safe to retry" 500, spec §4.3) or no answer at all is retried, as a client is asked to; any other non-200 fails at
 * once. The ingress URL may be a function, for a stack whose ingress is restarted on another port mid-test.
 */
export async function pollUntilReported(
  ingressUrl: string | (() => string),
  token: string,
  signalIds: readonly string[],
  opts: PollOptions = {},
): Promise<Map<string, SignalStatus>> {
  const count = opts.count ?? 1;
  const urlOf = typeof ingressUrl === 'string' ? () => ingressUrl : ingressUrl;
  const done = new Map<string, SignalStatus>();
  const retries: Record<number, number> = {};
  let lastPending: string[] = [];
  try {
    await waitFor(
      `${signalIds.length} signal(s) to be reported for ${count} account(s) on the poll`,
      async () => {
        const pending = signalIds.filter((id) => !done.has(id));
        await inBatches(pending, opts.concurrency ?? 16, async (signalId) => {
          const res = await get(`${urlOf()}/v1/signals/${signalId}`, { authorization: `Bearer ${token}` }).catch(() => undefined);
          if (res === undefined || res.status === 503 || (res.status === 500 && res.body?.error === 'Internal error reading outcomes; safe to retry')) {
            retries[res?.status ?? 0] = (retries[res?.status ?? 0] ?? 0) + 1;
            return;
          }
          if (res.status !== 200) throw new Error(`poll of ${signalId} answered ${res.status}: ${res.text}`);
          if (res.body.reported >= count) done.set(signalId, res.body as SignalStatus);
        });
        lastPending = signalIds.filter((id) => !done.has(id));
        return lastPending.length === 0;
      },
      opts.deadlineMs ?? 15_000,
      opts.intervalMs ?? 100,
    );
  } catch (err) {
    throw new Error(
      `${(err as Error).message}; still pending: ${lastPending.length} (${lastPending.slice(0, 5).join(', ')}); ` +
        `retried answers by status ${JSON.stringify(retries)}\n${opts.describe?.() ?? ''}`,
    );
  }
  pollRetries.push(retries);
  return done;
}

/** One signal's poll body once `count` accounts are reported (pollUntilReported for one). */
export async function reportedStatus(ingressUrl: string | (() => string), token: string, signalId: string, opts: PollOptions = {}): Promise<SignalStatus> {
  return (await pollUntilReported(ingressUrl, token, [signalId], opts)).get(signalId)!;
}

async function inBatches<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
