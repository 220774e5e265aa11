/**
 * What became of the accepted signals, read the way a caller reads it (the status poll), and the one-signal-at-a-time
 * latencies a caller sees: 202 → filled at the bridge, and 202 → the outcome visible to the poll.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { summarize, type Summary } from './stats';

export interface OutcomeTally {
  signals: number;
  filled: number;
  /** Rejections by reason (signal_expired is the one our own backlog would cause). */
  rejected: Record<string, number>;
  /** No outcome recorded when the tally was taken. */
  unreported: number;
}

type Fetch = (url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<{ status: number; body: any }>;

/** Polls every signal once (at most `concurrency` at a time) and counts the outcomes of its one account. */
export async function tallyOutcomes(http: Fetch, ingressUrl: string, token: string, signalIds: readonly string[], concurrency = 8): Promise<OutcomeTally> {
  const tally: OutcomeTally = { signals: signalIds.length, filled: 0, rejected: {}, unreported: 0 };
  let next = 0;
  const worker = async () => {
    while (next < signalIds.length) {
      const id = signalIds[next++]!;
      const res = await http(`${ingressUrl}/v1/signals/${id}`, { headers: { authorization: `Bearer ${token}` } });
      const item = res.status === 200 ? (res.body.accounts?.[0] as { outcome: string; reason: string | null } | undefined) : undefined;
      if (!item) tally.unreported++;
      else if (item.outcome === 'filled') tally.filled++;
      else tally.rejected[item.reason ?? 'unknown'] = (tally.rejected[item.reason ?? 'unknown'] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return tally;
}

export interface OneAtATime {
  signals: number;
  /** 202 → the paper bridge's ledger line for the fill. */
  filledMs: Summary;
  /** 202 → the first poll that shows the outcome (polled every 2 ms). */
  visibleMs: Summary;
  /**
   * The POST sent → the fill: what the trader's order waits in all. With dispatch at acceptance the bridge may fill
   * before the 202 reaches the caller (the command is queued before the answer), so 202 → filled can be negative.
   */
  sentToFilledMs: Summary;
  /** The POST sent → its 202 received. */
  answerMs: Summary;
}

/**
 * One signal at a time, nothing else going on: submit, then poll as fast as a caller reasonably would until the
 * outcome shows; the fill time comes from the bridge's ledger.
 */
export async function oneAtATime(opts: {
  http: Fetch;
  ingressUrl: string;
  secret: string;
  token: string;
  accounts: readonly string[];
  count: number;
  fillTimeOf: (signalId: string) => number | undefined;
  deadlineMs: number;
}): Promise<OneAtATime> {
  const filled: number[] = [];
  const visible: number[] = [];
  const sentToFilled: number[] = [];
  const answered: number[] = [];
  for (let i = 0; i < opts.count; i++) {
    const account = opts.accounts[i % opts.accounts.length]!;
    const sent = Date.now();
    const res = await opts.http(`${opts.ingressUrl}/webhook/custom/${account}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ secret: opts.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 }),
    });
    const t202 = Date.now();
    answered.push(t202 - sent);
    if (res.status !== 202) throw new Error(`one at a time: signal ${i} answered ${res.status} ${JSON.stringify(res.body)}`);
    const id = res.body.signalId as string;
    for (;;) {
      const poll = await opts.http(`${opts.ingressUrl}/v1/signals/${id}`, { headers: { authorization: `Bearer ${opts.token}` } });
      if (poll.status === 200 && poll.body.reported >= 1) {
        visible.push(Date.now() - t202);
        break;
      }
      if (Date.now() - t202 > opts.deadlineMs) throw new Error(`one at a time: ${id} not visible to the poll within ${opts.deadlineMs} ms`);
      await sleep(2);
    }
    const deadline = Date.now() + opts.deadlineMs;
    for (;;) {
      const fill = opts.fillTimeOf(id);
      if (fill !== undefined) {
        filled.push(fill - t202);
        sentToFilled.push(fill - sent);
        break;
      }
      if (Date.now() > deadline) throw new Error(`one at a time: ${id} has no fill in the ledger`);
      await sleep(5);
    }
  }
  return {
    signals: opts.count,
    filledMs: summarize(filled),
    visibleMs: summarize(visible),
    sentToFilledMs: summarize(sentToFilled),
    answerMs: summarize(answered),
  };
}
