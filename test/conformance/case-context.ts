import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { newCredential } from '../../src/registry/credentials';
import { isOpening, type Action } from '../../src/domain/actions';
import type { AccountOutcome } from '../../src/domain/outcome';
import { workflowResult, type TemporalView } from '../helpers/temporal';
import { commandIdOf } from '../helpers/commands';
import { httpPost } from '../../support/processes';
import type { BridgeUnderTest, BrokerView, ConformanceAccount, RefusalKind } from './driver';

/**
 * What the conformance suite's cases share (suite.ts and the *-cases.ts files): its accounts, how a signal is
 * submitted and its outcome read, and the checks on an outcome and on the broker side.
 */

export type Body = Record<string, unknown> & { action: Action };

export interface Run {
  signalId: string;
  commandId: string;
  outcome: AccountOutcome;
  /** Milliseconds from the 202 to the account workflow's end. */
  ms: number;
}

/** The accounts of one suite run, each under the run's own tag, and the owner's credentials. */
export function conformanceAccounts(driver: BridgeUnderTest) {
  const tag = randomBytes(4).toString('hex');
  const account = (name: string): ConformanceAccount => ({ id: `conf-${tag}-${name}`, platform: driver.platform, bridgeToken: newCredential('brg') });
  const accounts = {
    main: account('main'),
    guard: account('guard'),
    crash: account('crash'),
    late: account('late'),
    risky: account('risky'),
    stopper: account('stopper'),
    trader: account('trader'),
    tstop: account('tstop'),
    manager: account('manager'),
  };
  return { owner: `conf-owner-${tag}`, secret: newCredential('whsec'), token: newCredential('tok'), accounts };
}

export type ConformanceAccounts = ReturnType<typeof conformanceAccounts>;

/** How old `late`'s commands may be (its maxSignalAgeMs). */
export const LATE_AGE_MS = 3_000;

/** The registry document of a run: each account with the risk rules its cases need. */
export function conformanceRegistry({ owner, secret, token, accounts: a }: ConformanceAccounts) {
  const plain = (acc: ConformanceAccount) => ({ id: acc.id, owner, platform: acc.platform, bridgeToken: acc.bridgeToken });
  const stopOutAt5 = { lossGuards: { maxDrawdownPercent: 5, stopOut: true, timezone: 'UTC' } };
  const all = Object.values(a);
  return {
    accounts: [
      ...[a.main, a.crash, a.trader, a.manager].map(plain),
      { ...plain(a.guard), risk: { maxOpenPositions: 1 } },
      { ...plain(a.late), risk: { maxSignalAgeMs: LATE_AGE_MS } },
      { ...plain(a.risky), risk: { sizing: { mode: 'risk_percent', of: 'equity', percent: 1 }, lossGuards: { dailyLossAmount: 500, timezone: 'UTC' } } },
      { ...plain(a.stopper), risk: stopOutAt5 },
      { ...plain(a.tstop), risk: stopOutAt5 },
    ],
    secrets: [{ secret, owner, accounts: all.map((acc) => acc.id) }],
    tokens: [{ token, accounts: all.map((acc) => acc.id), suspendedUntil: null }],
  };
}

export interface CaseContext {
  driver: BridgeUnderTest;
  owner: string;
  url: () => string;
  redis: () => Redis;
  temporal: () => TemporalView;
  /** Posts one signal to the account's webhook; throws unless it gets a 202. */
  submit: (acc: ConformanceAccount, body: Body) => Promise<{ signalId: string; at: number }>;
  /** Waits for the account workflow's outcome of a submitted signal. */
  settle: (acc: ConformanceAccount, s: { signalId: string; at: number }, timeoutMs?: number) => Promise<Run>;
  /** Submits back to back (they execute in this acceptance order), then waits for every outcome. */
  runAll: (acc: ConformanceAccount, bodies: Body[]) => Promise<Run[]>;
  run: (acc: ConformanceAccount, body: Body) => Promise<Run>;
}

export function caseContext(base: Pick<CaseContext, 'driver' | 'owner' | 'url' | 'redis' | 'temporal'> & { secret: string }): CaseContext {
  const submit: CaseContext['submit'] = async (acc, body) => {
    const headers: Record<string, string> = isOpening(body.action) ? {} : { 'x-idempotency-key': `k-${randomBytes(8).toString('hex')}` };
    const res = await httpPost(`${base.url()}/webhook/custom/${acc.id}`, { secret: base.secret, ...body }, headers);
    if (res.status !== 202) throw new Error(`${body.action} on ${acc.id}: ${res.status} ${res.text}`);
    return { signalId: res.body.signalId as string, at: Date.now() };
  };
  const settle: CaseContext['settle'] = async (acc, s, timeoutMs = 20_000) => {
    const commandId = commandIdOf(s.signalId, acc.id);
    const outcome = await workflowResult<AccountOutcome>(base.temporal().client, commandId, timeoutMs);
    return { signalId: s.signalId, commandId, outcome, ms: Date.now() - s.at };
  };
  const runAll: CaseContext['runAll'] = async (acc, bodies) => {
    const submitted = [];
    for (const b of bodies) submitted.push(await submit(acc, b));
    return Promise.all(submitted.map((s) => settle(acc, s)));
  };
  const { driver, owner, url, redis, temporal } = base;
  return { driver, owner, url, redis, temporal, submit, settle, runAll, run: async (acc, body) => (await runAll(acc, [body]))[0]! };
}

/** A fill with a broker ticket and no reason; the ticket. */
export function filled(r: Run): string {
  expect(r.outcome).toMatchObject({ outcome: 'filled', ticket: expect.stringMatching(/^\d+$/), reason: null });
  return r.outcome.ticket!;
}

export function done(r: Run, ticket?: string | null): void {
  expect(r.outcome).toMatchObject({ outcome: 'done', reason: null, ...(ticket === undefined ? {} : { ticket }) });
}

/** Rejected with a reason that starts so. */
export function refused(r: Run, reasonStart: string): void {
  expect({ outcome: r.outcome.outcome, reason: r.outcome.reason?.slice(0, reasonStart.length) }).toEqual({ outcome: 'rejected', reason: reasonStart });
}

/** The reason's start of the broker's own refusal of that kind, as this bridge reports it. */
export const brokerCode = (driver: BridgeUnderTest, kind: RefusalKind) => `broker:${driver.codes[kind]} `;

export function position(v: BrokerView, ticket: string) {
  const p = v.positions.find((x) => x.ticket === ticket);
  if (!p) throw new Error(`no position ${ticket} on the broker side: ${JSON.stringify(v.native)}`);
  return p;
}

export function order(v: BrokerView, ticket: string) {
  const o = v.orders.find((x) => x.ticket === ticket);
  if (!o) throw new Error(`no order ${ticket} on the broker side: ${JSON.stringify(v.native)}`);
  return o;
}
