/**
 * The paper bridge's ledger as the fault suite reads it: orders grouped by command, a wait for a burst's orders, and
 * the mid-load scenarios' load and final check (each accepted buy ordered once and reported filled with that order).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { readLedger, type LedgerEntry } from '../../src/paper/ledger';
import type { AccountOutcome } from '../../src/domain/outcome';
import { waitFor } from '../../support/infra';
import { httpGet, type HttpResult } from '../../support/processes';
import { commandIdOf } from '../helpers/commands';
import { pollUntilReported } from '../helpers/poll';
import { MARKET_FILL } from '../helpers/poll-items';
import { runBounded, tally, type Sent } from './requests';

/** Ledger lines that placed an order (a market fill `open` or a pending `place`), grouped by commandId. */
export function ordersByCommand(ledgerFile: string): Map<string, LedgerEntry[]> {
  const out = new Map<string, LedgerEntry[]>();
  for (const line of readLedger(ledgerFile)) {
    if (line.op !== 'open' && line.op !== 'place') continue;
    const id = String(line.commandId);
    out.set(id, [...(out.get(id) ?? []), line]);
  }
  return out;
}

/**
 * Waits until the ledger holds an order for every one of `commandIds` (a cheap file read, so a burst's progress can be
 * watched without loading Temporal with polls); returns the orders by commandId.
 */
export async function waitForOrders(
  ledgerFile: string,
  commandIds: readonly string[],
  deadlineMs: number,
  describe?: () => string,
): Promise<Map<string, LedgerEntry[]>> {
  let missing: string[] = [];
  try {
    return await waitFor(
      `the ledger to hold an order for each of ${commandIds.length} command(s)`,
      async () => {
        const orders = ordersByCommand(ledgerFile);
        missing = commandIds.filter((id) => !orders.has(id));
        return missing.length === 0 ? orders : undefined;
      },
      deadlineMs,
      250,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; missing ${missing.length} (${missing.slice(0, 3).join(', ')}…)\n${describe?.() ?? ''}`);
  }
}

/** One buy of a mid-load fault scenario: its target account and its idempotency key. */
export interface BuyMeta {
  accountId: string;
  key: string;
}

/**
 * The load of a mid-load fault scenario: buys spread over the accounts, 4 at a time, each with its own key; callers
 * back off 250 ms after a refusal (what "retry later" asks of a client). Once `before` buys are accepted and one is
 * ordered, `fault` runs (once); the load stops when `after` more are accepted after the fault ended, or at the bounds.
 */
export async function buysAcrossAFault(opts: {
  accountIds: readonly string[];
  tag: string;
  ledgerFile: string;
  send: (meta: BuyMeta) => Promise<HttpResult>;
  before: number;
  after: number;
  maxRequests: number;
  deadlineMs: number;
  fault: (all: readonly Sent<BuyMeta>[]) => Promise<void>;
}): Promise<{ answers: Sent<BuyMeta>[]; faultEndedAt: number }> {
  let faulting: Promise<void> | undefined;
  let faultEndedAt: number | undefined;
  let lastStatus = 202;
  let sofar: readonly Sent<BuyMeta>[] = [];
  const accepted = (all: readonly Sent<BuyMeta>[], since = 0) => all.filter((a) => a.status === 202 && a.sentAt >= since).length;
  const answers = await runBounded<BuyMeta>({
    count: opts.maxRequests,
    concurrency: 4,
    deadlineMs: opts.deadlineMs,
    send: (i) => {
      const meta = { accountId: opts.accountIds[i % opts.accountIds.length]!, key: `${opts.tag}-${i}` };
      return {
        meta,
        request: async () => {
          // The callers' backoff after a refusal, not a wait for a condition.
          if (lastStatus !== 202) await delay(250);
          return opts.send(meta);
        },
      };
    },
    onDone: (sent, all) => {
      lastStatus = sent.status;
      sofar = all;
      if (!faulting && accepted(all) >= opts.before && ordersByCommand(opts.ledgerFile).size > 0) {
        faulting = opts.fault(all).then(() => {
          faultEndedAt = Date.now();
        });
      }
    },
    stop: () => faultEndedAt !== undefined && accepted(sofar, faultEndedAt) >= opts.after,
  });
  await faulting;
  if (faultEndedAt === undefined) throw new Error(`the fault never ran: ${accepted(answers)} accepted, ${ordersByCommand(opts.ledgerFile).size} ordered`);
  return { answers, faultEndedAt };
}

/**
 * The end of every mid-load fault scenario of single-account buys: each signal that got a 202 (after the callers'
 * retries) is ordered exactly once at the paper bridge, nothing else is ordered, and the poll reports that very order
 * as filled. With `overtakenAllowed`, a signal may instead be reported rejected `signal_overtaken` and then must have no
 * order at all: what the design answers when Redis was away between a signal's start and the confirmation of its place
 * in the account's order, for longer than that place is held (docs/architecture.md, "Ordering and delivery"). Jest
 * expectations; returns what it read for the scenario's own report line.
 */
export async function expectEachAcceptedFilledOnce(opts: {
  final: readonly Sent<{ accountId: string; key: string }>[];
  ledgerFile: string;
  ingressUrl: () => string;
  token: string;
  deadlineMs: number;
  describe: () => string;
  overtakenAllowed?: boolean;
}): Promise<{ signals: { signalId: string; accountId: string; key: string }[]; orders: Map<string, LedgerEntry[]>; overtaken: number }> {
  const accepted = opts.final.map((a) => ({ signalId: a.body.signalId as string, accountId: a.meta.accountId, key: a.meta.key }));
  expect(new Set(accepted.map((s) => s.signalId)).size).toBe(accepted.length);
  const overtakenIds = opts.overtakenAllowed ? await overtakenOf(opts, accepted) : new Set<string>();
  const signals = accepted.filter((s) => !overtakenIds.has(s.signalId));
  const commandIds = signals.map((s) => commandIdOf(s.signalId, s.accountId));
  try {
    await waitForOrders(opts.ledgerFile, commandIds, opts.deadlineMs, opts.describe);
  } catch (err) {
    // What became of the ones that never reached the bridge: the poll says, one read each.
    const placed = ordersByCommand(opts.ledgerFile);
    const missing = signals.filter((s) => !placed.has(commandIdOf(s.signalId, s.accountId)));
    const seen = await Promise.all(
      missing.map(async (s) => {
        const res = await httpGet(`${opts.ingressUrl()}/v1/signals/${s.signalId}`, { authorization: `Bearer ${opts.token}` }).catch(() => undefined);
        const account = (res?.body?.accounts as AccountOutcome[] | undefined)?.[0];
        return res?.status !== 200 ? `poll ${res?.status ?? 'unanswered'}` : account ? `${account.outcome} ${account.reason ?? ''}`.trim() : 'unreported';
      }),
    );
    throw new Error(`${(err as Error).message}\nthe ${missing.length} not ordered, on the poll: ${JSON.stringify(tally(seen, (v) => v))}`);
  }
  const outcomes = await pollUntilReported(
    opts.ingressUrl,
    opts.token,
    signals.map((s) => s.signalId),
    { deadlineMs: opts.deadlineMs, describe: opts.describe },
  );
  const orders = ordersByCommand(opts.ledgerFile);
  // Every filled signal's one order, and no order for anything else (an overtaken signal included).
  expect([...orders.keys()].sort()).toEqual([...commandIds].sort());
  const doubled = [...orders.entries()].filter(([, lines]) => lines.length !== 1).map(([id, lines]) => `${id}: ${lines.length}`);
  expect(doubled).toEqual([]);
  for (const s of signals) {
    const order = orders.get(commandIdOf(s.signalId, s.accountId))![0]!;
    expect({ key: s.key, accounts: outcomes.get(s.signalId)?.accounts }).toEqual({
      key: s.key,
      accounts: [{ accountId: s.accountId, outcome: 'filled', ticket: order.ticket, reason: null, occurredAt: expect.any(String), ...MARKET_FILL }],
    });
  }
  return { signals: accepted, orders, overtaken: overtakenIds.size };
}

/** The accepted signals the poll reports rejected signal_overtaken, once every one of them is reported. */
async function overtakenOf(
  opts: { ingressUrl: () => string; token: string; deadlineMs: number; describe: () => string },
  accepted: readonly { signalId: string }[],
): Promise<Set<string>> {
  const outcomes = await pollUntilReported(
    opts.ingressUrl,
    opts.token,
    accepted.map((s) => s.signalId),
    { deadlineMs: opts.deadlineMs, describe: opts.describe },
  );
  const overtaken = [...outcomes].filter(([, status]) => status.accounts[0]?.outcome === 'rejected' && status.accounts[0].reason === 'signal_overtaken');
  return new Set(overtaken.map(([signalId]) => signalId));
}
