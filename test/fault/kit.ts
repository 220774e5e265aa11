/**
 * Shared pieces of the fault-injection suite (test/fault/*.test.ts): a registry document of fresh accounts, its
 * import with the admin CLI, bounded request loops, polling outcomes over HTTP, the paper bridge's ledger grouped by
 * command, a Temporal client for describe/list, and a read-only look at a command's delivery state in Redis.
 *
 * Not a test file (jest picks up *.test.ts only).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Redis } from 'ioredis';
import { readLedger, type LedgerEntry } from '../../src/paper/ledger';
import { newCredential } from '../../src/registry/credentials';
import { startTemporal, waitFor, type TemporalServer } from '../../support/infra';
import {
  ensureBuilt,
  httpGet,
  httpPost,
  processLogDir,
  runAdminProcess,
  serviceEnv,
  startProcessStack,
  type HttpResult,
  type ProcessStack,
} from '../../support/processes';
import { MARKET_FILL } from '../helpers/poll-items';

export { httpGet, httpPost };

// ---------------------------------------------------------------------------------------------------------------
// Registry

export interface FaultAccount {
  id: string;
  platform: 'mt5' | 'ctrader';
  bridgeToken: string;
}

export interface FaultRegistry {
  tag: string;
  owner: string;
  secret: string;
  token: string;
  accounts: FaultAccount[];
  /** The admin import document (credentials in plain text: kept under the run dir, mode 0600). */
  doc: Record<string, unknown>;
}

/**
 * `count` fresh accounts of one owner (alternating mt5 / ctrader, unless `platform`), one secret linking all, one
 * poll token for all. Market entries may be executed up to `maxSignalAgeMs` after acceptance (default 10 minutes, so
 * that a burst that takes a loaded machine a minute tests delivery, not the staleness guard); 'service-default' leaves
 * the account without its own setting (DEFAULT_MAX_SIGNAL_AGE_MS, 30 s).
 */
export function makeRegistry(
  label: string,
  count: number,
  opts: { platform?: 'mt5' | 'ctrader'; maxSignalAgeMs?: number | 'service-default' } = {},
): FaultRegistry {
  const tag = `${label}-${randomBytes(4).toString('hex')}`;
  const owner = `fault-owner-${tag}`;
  const accounts: FaultAccount[] = Array.from({ length: count }, (_, i) => ({
    id: `f-${tag}-${i}`,
    platform: opts.platform ?? (i % 2 === 0 ? 'mt5' : 'ctrader'),
    bridgeToken: newCredential('brg'),
  }));
  const secret = newCredential('whsec');
  const token = newCredential('tok');
  const doc = {
    accounts: accounts.map((a) => ({
      id: a.id,
      owner,
      platform: a.platform,
      bridgeVersion: a.platform === 'mt5' ? '2.1.0' : '1.2.0',
      bridgeToken: a.bridgeToken,
      ...(opts.maxSignalAgeMs === 'service-default' ? {} : { risk: { maxSignalAgeMs: opts.maxSignalAgeMs ?? 600_000 } }),
    })),
    secrets: [{ secret, owner, accounts: accounts.map((a) => a.id) }],
    tokens: [{ token, accounts: accounts.map((a) => a.id), suspendedUntil: null }],
  };
  return { tag, owner, secret, token, accounts, doc };
}

/** A directory of this scenario's own under the run's process log dir. */
export function scenarioDir(tag: string): string {
  const dir = path.join(processLogDir(), `fault-${tag}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes a registry document (or the part of it with only `accountIds`, for a bridge of its own) and returns its path. */
export function writeRegistryFile(dir: string, name: string, reg: FaultRegistry, accountIds?: string[]): string {
  const file = path.join(dir, name);
  const doc = accountIds ? { accounts: (reg.doc.accounts as { id: string }[]).filter((a) => accountIds.includes(a.id)) } : reg.doc;
  fs.writeFileSync(file, JSON.stringify(doc, null, 2), { mode: 0o600 });
  return file;
}

/** A scenario's files: its directory, the paper bridge's ledger there, and its registry document written there. */
export function scenarioFiles(reg: FaultRegistry): { dir: string; ledgerFile: string; registryFile: string } {
  const dir = scenarioDir(reg.tag);
  return { dir, ledgerFile: path.join(dir, 'ledger.jsonl'), registryFile: writeRegistryFile(dir, 'registry.json', reg) };
}

/** `admin import FILE --json` into the Redis of `env`; throws unless it imported every record. */
export async function importRegistry(file: string, env: Record<string, string>): Promise<void> {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { accounts?: unknown[]; secrets?: unknown[]; tokens?: unknown[] };
  const run = await runAdminProcess(['import', file, '--json'], env);
  if (run.code !== 0) throw new Error(`admin import exited ${run.code}: ${run.stderr}`);
  expect(JSON.parse(run.stdout)).toEqual({ accounts: doc.accounts?.length ?? 0, secrets: doc.secrets?.length ?? 0, tokens: doc.tokens?.length ?? 0 });
}

/**
 * The whole stack (worker, ingress, paper bridge) on a Temporal dev server of the scenario's own, which the scenario
 * may stop; the run's shared Redis. `env` is added to the service's environment.
 */
export async function stackOnOwnTemporal(
  reg: FaultRegistry,
  env: Record<string, string> = {},
): Promise<{ temporal: TemporalServer; stack: ProcessStack; ledgerFile: string }> {
  ensureBuilt();
  const { ledgerFile, registryFile } = scenarioFiles(reg);
  const temporal = await startTemporal();
  try {
    await importRegistry(registryFile, serviceEnv());
    const stack = await startProcessStack({ registryFile, ledgerFile, env: { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default', ...env } });
    return { temporal, stack, ledgerFile };
  } catch (err) {
    await temporal.stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Requests

export interface Sent<T = unknown> {
  index: number;
  meta: T;
  /** ms since the epoch when the request left / its answer arrived. */
  sentAt: number;
  doneAt: number;
  ms: number;
  status: number;
  body: any;
  headers?: Headers;
  /** Set when no HTTP answer came at all (connection refused, reset, or the 10 s deadline of httpPost). */
  error?: string;
}

/**
 * Runs `count` requests, at most `concurrency` at once, and stops starting new ones past `deadlineMs` (bounded in
 * count and time). `send(i)` makes request i; `onDone` sees every answer as it arrives.
 */
export async function runBounded<T>(opts: {
  count: number;
  concurrency: number;
  deadlineMs: number;
  send: (index: number) => { meta: T; request: () => Promise<HttpResult> };
  onDone?: (sent: Sent<T>, all: Sent<T>[]) => void;
  /** Checked before each new request: true ends the run early. */
  stop?: () => boolean;
  /** How long the lane waits after this answer before its next request (a client told "retry later" waits). */
  pauseAfter?: (sent: Sent<T>) => number;
}): Promise<Sent<T>[]> {
  const until = Date.now() + opts.deadlineMs;
  const results: Sent<T>[] = [];
  let next = 0;
  const lane = async () => {
    while (next < opts.count && Date.now() < until && !opts.stop?.()) {
      const index = next++;
      const { meta, request } = opts.send(index);
      const sentAt = Date.now();
      let sent: Sent<T>;
      try {
        const res = await request();
        const doneAt = Date.now();
        sent = { index, meta, sentAt, doneAt, ms: doneAt - sentAt, status: res.status, body: res.body, headers: res.headers };
      } catch (err) {
        const doneAt = Date.now();
        sent = { index, meta, sentAt, doneAt, ms: doneAt - sentAt, status: 0, body: undefined, error: String((err as Error)?.message ?? err) };
      }
      results.push(sent);
      opts.onDone?.(sent, results);
      const pause = opts.pauseAfter?.(sent) ?? 0;
      if (pause > 0) await delay(pause);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, lane));
  return results.sort((a, b) => a.index - b.index);
}

/** `items` through `fn`, at most `concurrency` at once, in order. */
export async function mapLimit<T, R>(items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** Counts by a key, for messages: {"202": 290, "503": 10}. */
export function tally<T>(items: readonly T[], key: (t: T) => string | number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[String(key(item))] = (out[String(key(item))] ?? 0) + 1;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Outcomes (the status poll)

/** The poll answers that asked for a retry, per pollUntilReported call (for the scenario's report line). */
export const pollRetries: Record<number, number>[] = [];

export interface AccountOutcome {
  accountId: string;
  outcome: 'filled' | 'rejected';
  ticket: string | null;
  reason: string | null;
  occurredAt: string;
}

/**
 * Polls every signal until each shows `expected` reported accounts, within one deadline for all; a 503 is retried
 * (the service asks for it), any other non-200 fails at once. Returns each signal's accounts.
 */
export async function pollUntilReported(
  ingressUrl: () => string,
  token: string,
  signalIds: readonly string[],
  opts: { deadlineMs: number; expected?: number; concurrency?: number; describe?: () => string },
): Promise<Map<string, AccountOutcome[]>> {
  const expected = opts.expected ?? 1;
  const done = new Map<string, AccountOutcome[]>();
  const retries: Record<number, number> = {};
  let lastPending: string[] = [];
  try {
    await waitFor(
      `${signalIds.length} signal(s) to be reported on the poll`,
      async () => {
        const pending = signalIds.filter((id) => !done.has(id));
        await mapLimit(pending, opts.concurrency ?? 16, async (signalId) => {
          const res = await httpGet(`${ingressUrl()}/v1/signals/${signalId}`, { authorization: `Bearer ${token}` }).catch(() => undefined);
          // 503 asks for a retry; so does the poll's 500 (spec §4.3: "internal error reading outcomes; safe to retry"),
          // which it answers when a Temporal describe runs past its deadline. Both are counted for the report.
          if (res === undefined || res.status === 503 || (res.status === 500 && res.body?.error === 'Internal error reading outcomes; safe to retry')) {
            retries[res?.status ?? 0] = (retries[res?.status ?? 0] ?? 0) + 1;
            return;
          }
          if (res.status !== 200) throw new Error(`poll of ${signalId} answered ${res.status}: ${res.text}`);
          if (res.body.reported >= expected) done.set(signalId, res.body.accounts as AccountOutcome[]);
        });
        lastPending = signalIds.filter((id) => !done.has(id));
        return lastPending.length === 0;
      },
      opts.deadlineMs,
      200,
    );
  } catch (err) {
    throw new Error(
      `${(err as Error).message}; still pending: ${lastPending.length} (${lastPending.slice(0, 5).join(', ')}…); ` +
        `retried answers by status ${JSON.stringify(retries)}\n${opts.describe?.() ?? ''}`,
    );
  }
  pollRetries.push(retries);
  return done;
}

// ---------------------------------------------------------------------------------------------------------------
// The paper bridge's ledger

export const commandIdOf = (signalId: string, accountId: string): string => `signal/${signalId}/account/${accountId}`;

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
 * as filled. Jest expectations; returns what it read for the scenario's own report line.
 */
export async function expectEachAcceptedFilledOnce(opts: {
  final: readonly Sent<{ accountId: string; key: string }>[];
  ledgerFile: string;
  ingressUrl: () => string;
  token: string;
  deadlineMs: number;
  describe: () => string;
}): Promise<{ signals: { signalId: string; accountId: string; key: string }[]; orders: Map<string, LedgerEntry[]> }> {
  const signals = opts.final.map((a) => ({ signalId: a.body.signalId as string, accountId: a.meta.accountId, key: a.meta.key }));
  expect(new Set(signals.map((s) => s.signalId)).size).toBe(signals.length);
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
  expect([...orders.keys()].sort()).toEqual([...commandIds].sort());
  const doubled = [...orders.entries()].filter(([, lines]) => lines.length !== 1).map(([id, lines]) => `${id}: ${lines.length}`);
  expect(doubled).toEqual([]);
  for (const s of signals) {
    const order = orders.get(commandIdOf(s.signalId, s.accountId))![0]!;
    expect({ key: s.key, accounts: outcomes.get(s.signalId) }).toEqual({
      key: s.key,
      accounts: [{ accountId: s.accountId, outcome: 'filled', ticket: order.ticket, reason: null, occurredAt: expect.any(String), ...MARKET_FILL }],
    });
  }
  return { signals, orders };
}

// ---------------------------------------------------------------------------------------------------------------
// Temporal

export interface TemporalView {
  client: Client;
  close(): Promise<void>;
}

export async function temporalClient(address: string, namespace = 'default'): Promise<TemporalView> {
  const connection = await Connection.connect({ address, connectTimeout: 5_000 });
  return { client: new Client({ connection, namespace }), close: () => connection.close() };
}

/** Every execution matching a visibility query (e.g. `TaskQueue = "q" AND WorkflowType = "accountWorkflow"`). */
export async function listExecutions(client: Client, query: string): Promise<{ workflowId: string; status: string; type: string }[]> {
  const out: { workflowId: string; status: string; type: string }[] = [];
  for await (const wf of client.workflow.list({ query })) out.push({ workflowId: wf.workflowId, status: wf.status.name, type: wf.type });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Redis (read only): the command queue's delivery marks, to know a bridge has taken a command

export interface CommandState {
  exists: boolean;
  deliveredAt?: number;
  reported: boolean;
}

export async function commandState(redis: Redis, accountId: string, commandId: string): Promise<CommandState> {
  // Key layout of src/bridge/queue.ts: es:bc:{<account>}:<commandId>, fields command, deliveredAt, session, report.
  const [command, deliveredAt, report] = await redis.hmget(`es:bc:{${accountId}}:${commandId}`, 'command', 'deliveredAt', 'report');
  return { exists: command !== null, deliveredAt: deliveredAt === null ? undefined : Number(deliveredAt), reported: report !== null };
}

/** A throwaway ioredis client that fails fast (a test must never hang on it). */
export function redisClient(url: string): Redis {
  const r = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 2_000 });
  r.on('error', () => undefined);
  return r;
}

/** Sends a signal to a process group (SIGSTOP/SIGCONT to freeze and thaw a program, like a hung terminal). */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  if (pgid <= 0) throw new Error(`no process group to send ${signal} to`);
  process.kill(-pgid, signal);
}

export const BACKPRESSURE_BODY = { error: 'System under high load, retry later', backpressure: true };

/**
 * Which of spec §4.1's two 503s an answer is: `backpressure` (not accepted, no signalId: retry later) or `partial`
 * (SignalAccepted with success false and a pollable signalId: a start that may have happened; poll, or retry with the
 * same key, which is deduplicated). Undefined for anything else.
 */
export function kindOf503(res: { status: number; body: any }): 'backpressure' | 'partial' | undefined {
  if (res.status !== 503) return undefined;
  const b = res.body;
  if (b && b.error === BACKPRESSURE_BODY.error && b.backpressure === true && Object.keys(b).length === 2) return 'backpressure';
  if (
    b &&
    b.success === false &&
    typeof b.signalId === 'string' &&
    /^sig_[0-9a-f]{32}$/.test(b.signalId) &&
    typeof b.correlationId === 'string' &&
    typeof b.accountsResolved === 'number' &&
    Object.keys(b).length === 4
  ) {
    return 'partial';
  }
  return undefined;
}

/**
 * Re-sends every answer that was not a 202 (same request, same idempotency key), as a client told to retry later
 * would, until it is a 202: at most `attempts` times each, within `deadlineMs` for all. Returns the final answers.
 */
export async function retryUntilAccepted<T>(
  results: readonly Sent<T>[],
  request: (r: Sent<T>) => Promise<HttpResult>,
  opts: { attempts?: number; deadlineMs?: number } = {},
): Promise<Map<number, Sent<T>>> {
  const out = new Map<number, Sent<T>>();
  const until = Date.now() + (opts.deadlineMs ?? 60_000);
  for (const r of results.filter((x) => x.status !== 202)) {
    let last: Sent<T> = r;
    for (let attempt = 1; attempt <= (opts.attempts ?? 10) && Date.now() < until && last.status !== 202; attempt++) {
      const sentAt = Date.now();
      const res = await request(r).catch(() => undefined);
      const doneAt = Date.now();
      last = { ...r, sentAt, doneAt, ms: doneAt - sentAt, status: res?.status ?? 0, body: res?.body, headers: res?.headers };
      if (last.status !== 202 && last.status !== 503 && last.status !== 0) break;
      // The caller's backoff between retries (what a client told "retry later" does), not a wait for a condition.
      if (last.status !== 202) await delay(200 * attempt);
    }
    // A partial 503 named the signal already: the retry with the same key is a replay of that very signal.
    if (kindOf503(r) === 'partial' && last.status === 202)
      expect({ index: r.index, signalId: last.body.signalId }).toEqual({ index: r.index, signalId: r.body.signalId });
    out.set(r.index, last);
  }
  return out;
}

/** For failure messages: who polls the task queue, and where a few executions stand (status, last events, pending activities). */
export async function temporalDiagnosis(client: Client, taskQueue: string, workflowIds: readonly string[]): Promise<string> {
  const lines: string[] = [];
  try {
    const { TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY } = temporal.api.enums.v1.TaskQueueType;
    for (const [type, name] of [
      [TASK_QUEUE_TYPE_WORKFLOW, 'workflow'],
      [TASK_QUEUE_TYPE_ACTIVITY, 'activity'],
    ] as const) {
      const d = await client.workflowService.describeTaskQueue({ namespace: client.options.namespace, taskQueue: { name: taskQueue }, taskQueueType: type });
      lines.push(
        `${name} pollers on ${taskQueue}: ${(d.pollers ?? []).map((p) => `${p.identity} (last ${String(p.lastAccessTime?.seconds)})`).join(', ') || 'none'}`,
      );
    }
    for (const workflowId of workflowIds.slice(0, 3)) {
      const handle = client.workflow.getHandle(workflowId);
      const d = await handle.describe();
      const raw = d.raw as {
        pendingActivities?: { activityType?: { name?: string }; attempt?: number; lastFailure?: { message?: string } }[];
        pendingWorkflowTask?: { state?: unknown; attempt?: number };
      };
      const history = await handle.fetchHistory();
      const events = (history.events ?? []).slice(-6).map((e) => String(e.eventType));
      lines.push(
        `${workflowId}: ${d.status.name}, ${history.events?.length} events, last ${events.join(' > ')}; pending activities ` +
          `${JSON.stringify((raw.pendingActivities ?? []).map((a) => [a.activityType?.name, a.attempt, a.lastFailure?.message]))}; pending workflow task ${JSON.stringify(raw.pendingWorkflowTask ?? null)}`,
      );
    }
  } catch (err) {
    lines.push(`(diagnosis failed: ${(err as Error).message})`);
  }
  return lines.join('\n');
}
