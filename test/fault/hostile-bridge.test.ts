import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { ownerCallbacksOf } from '../../src/callbacks/wiring';
import { callbackEnv, callbackReceiver } from '../helpers/callback-receiver';
import { testConfig } from '../helpers/stack';
import { iso } from '../helpers/trades';
import { ensureBuilt, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import {
  httpPost,
  importRegistry,
  listExecutions,
  makeRegistry,
  pollUntilReported,
  redisClient,
  scenarioDir,
  temporalClient,
  writeRegistryFile,
  type TemporalView,
} from './kit';

/**
 * A hostile bridge beside an honest owner, the service as processes (worker, ingress, paper bridge) on the run's
 * Temporal and Redis: the hostile account's token sends 4 loops of 100 `position_modified` events with new
 * 128-character ids on 5 tickets for 30 s, its owner subscribed to trade-event callbacks, while another owner sends
 * 4 signals a second through the paper bridge. What the hostile token could make Redis hold and Temporal start is
 * bounded; the other owner's 202 and accept → fill, quiet and under attack, are written to
 * .run/hostile-bridge.json for docs/reliability.md (figures on a shared machine: the assertions are on the bounds).
 */
const ATTACK_MS = 30_000;
const QUIET_MS = 15_000;
const SIGNALS_PER_SECOND = 4;

const hostile = makeRegistry('hostile', 1, { platform: 'mt5' });
const honest = makeRegistry('honest', 1, { platform: 'mt5' });

let stack: ProcessStack | undefined;
let temporal: TemporalView | undefined;
let redis: Redis;
let receiver: Awaited<ReturnType<typeof callbackReceiver>>;

beforeAll(async () => {
  ensureBuilt();
  receiver = await callbackReceiver('127.0.0.1');
  const env = callbackEnv([receiver.origin()]);
  const dir = scenarioDir(hostile.tag);
  await importRegistry(writeRegistryFile(dir, 'hostile.json', hostile), serviceEnv());
  const honestFile = writeRegistryFile(dir, 'honest.json', honest);
  await importRegistry(honestFile, serviceEnv());
  await ownerCallbacksOf(testConfig(env), (redis = redisClient(serviceEnv().REDIS_URL!))).register(hostile.owner, receiver.url('/hostile'), [
    'position.modified',
  ]);
  stack = await startProcessStack({ registryFile: honestFile, env });
  temporal = await temporalClient();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await temporal?.close();
  await receiver?.close();
  redis?.disconnect();
});

let serial = 0;
const hundred = () =>
  Array.from({ length: 100 }, (_, i) => ({
    eventId: `mod:${String(++serial).padStart(9, '0')}:`.padEnd(128, 'x'),
    type: 'position_modified',
    at: iso(Date.now()),
    ticket: String(600_000 + (i % 5)),
    symbol: 'EURUSD',
    sl: 1.07,
    tp: 1.09,
    cause: 'trailing_stop',
  }));

/** The hostile bridge: `loops` calls in flight at once until `untilMs`, every answer counted by status. */
async function attack(url: string, untilMs: number, loops: number): Promise<{ calls: Record<string, number>; events: number; retryAfter: string[] }> {
  const calls: Record<string, number> = {};
  const retryAfter = new Set<string>();
  let events = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (Date.now() < untilMs) {
        // Its own client: a call of 100 events may take longer than the helpers' 10 s under this load.
        const res = await fetch(`${url}/bridge/v1/trades`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${hostile.accounts[0]!.bridgeToken}` },
          body: JSON.stringify({ events: hundred() }),
          signal: AbortSignal.timeout(120_000),
        });
        const body = (await res.json().catch(() => ({}))) as { events?: { result: string }[] };
        calls[res.status] = (calls[res.status] ?? 0) + 1;
        if (res.status === 200) events += (body.events ?? []).filter((e) => e.result === 'recorded').length;
        // A hostile bridge ignores Retry-After; it is only noted.
        if (res.status === 429) retryAfter.add(res.headers.get('retry-after') ?? '');
      }
    }),
  );
  return { calls, events, retryAfter: [...retryAfter] };
}

/** The honest owner: SIGNALS_PER_SECOND buys a second for `ms`; each 202's time, then each send → fill from the poll. */
async function honestSignals(url: string, ms: number) {
  const sent: { signalId: string; sentAt: number; ms: number }[] = [];
  let offered = 0;
  const refused: Record<string, number> = {};
  const start = Date.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; Date.now() - start < ms; i++) {
    const due = start + (i * 1000) / SIGNALS_PER_SECOND;
    if (due > Date.now()) await delay(due - Date.now());
    offered++;
    pending.push(
      (async () => {
        const t0 = Date.now();
        const res = await httpPost(`${url}/webhook/custom/${honest.accounts[0]!.id}`, {
          secret: honest.secret,
          action: 'buy',
          symbol: 'EURUSD',
          volume: 0.01,
        }).catch(() => ({ status: 'no answer in 10 s', body: undefined }));
        if (res.status !== 202) refused[res.status] = (refused[res.status] ?? 0) + 1;
        else sent.push({ signalId: res.body.signalId as string, sentAt: t0, ms: Date.now() - t0 });
      })(),
    );
  }
  await Promise.all(pending);
  const statuses = await pollUntilReported(
    url,
    honest.token,
    sent.map((s) => s.signalId),
    { deadlineMs: 60_000 },
  );
  // From the post's send to the fill the bridge reported (the 202 itself comes after the command is queued).
  const fills = sent.map((s) => Date.parse(statuses.get(s.signalId)!.accounts[0]!.occurredAt!) - s.sentAt);
  return { offered, refused, accepted: sent.length, answer: summary(sent.map((s) => s.ms)), fill: summary(fills) };
}

function summary(values: number[]) {
  const v = [...values].sort((a, b) => a - b);
  const at = (q: number) => v[Math.min(v.length - 1, Math.floor(q * v.length))] ?? NaN;
  return { n: v.length, p50: at(0.5), p99: at(0.99), max: v[v.length - 1] ?? NaN };
}

async function usedMemory(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
}

test("when a bridge floods trade events with its owner's callbacks on, then what it can make Redis hold and Temporal start is bounded, and another owner's signals are measured beside it", async () => {
  const url = stack!.ingress.url;
  const quiet = await honestSignals(url, QUIET_MS);
  const memoryBefore = await usedMemory();
  const since = new Date().toISOString();
  const load = [os.loadavg()[0]!];
  const sampling = setInterval(() => load.push(os.loadavg()[0]!), 5_000);
  const [flood, underAttack] = await Promise.all([attack(url, Date.now() + ATTACK_MS, 4), honestSignals(url, ATTACK_MS)]);
  clearInterval(sampling);
  const memoryAfter = await usedMemory();
  const seen = await redis.zcard(`es:trades:{${hostile.accounts[0]!.id}}:seen`);
  const executions = await listExecutions(temporal!.client, `TaskQueue = "${stack!.env.TEMPORAL_TASK_QUEUE}" AND StartTime >= "${since}"`);
  const deliveries = executions.filter((e) => e.workflowId.startsWith('callback:trade')).length;
  const figures = {
    commit: process.env.HOSTILE_LABEL ?? 'this checkout',
    cores: os.cpus().length,
    loadAverage1m: { min: Math.min(...load), max: Math.max(...load) },
    hostile: { ...flood, eventIdsKept: seen, redisGrowthBytes: memoryAfter - memoryBefore, tradeDeliveryWorkflows: deliveries },
    honest: { quiet, underAttack },
  };
  fs.writeFileSync(
    path.join(process.cwd(), '.run', `hostile-bridge${process.env.HOSTILE_LABEL ? `-${process.env.HOSTILE_LABEL}` : ''}.json`),
    JSON.stringify(figures, null, 2),
  );
  console.log(JSON.stringify(figures));

  // 30 s of flood spans at most two of the account's minutes (1,200 trade events each) and two of the owner's
  // callback minutes (60 deliveries alone and one coalesced each); the ids kept are bounded whatever it sends.
  expect(flood.events).toBeLessThanOrEqual(2 * 1_200);
  expect(deliveries).toBeLessThanOrEqual(2 * 61);
  expect(seen).toBeLessThanOrEqual(20_000);
}, 400_000);
