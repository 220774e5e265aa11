/**
 * Scenario 1, the floor, run as its own process by bench/run.ts: `node dist/bench/floor.js SPEC.json OUT.json`.
 *
 * The same signal workflows the ingress starts, started straight through @temporalio/client at a fixed concurrency:
 * each of `concurrency` loops takes the account's next sequence number (RedisAccountSequencer.next, so the bridge
 * hands the command out in order, as for an accepted signal) and starts `signal/<id>` with the same input shape,
 * memo, search attributes and id reuse policy as the ingress (src/temporal/executions.ts). No HTTP, no JSON body,
 * no limiter, no registry lookup on the way: what one accepted signal cannot cost less than.
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { Redis } from 'ioredis';
import { RedisAccountSequencer } from '../src/bridge/ordering';
import { RedisRegistry } from '../src/registry/registry';
import type { SignalWorkflowInput } from '../src/domain/workflow-input';
import { accountSnapshot } from '../src/signals/launch';
import { signalWorkflowId } from '../src/domain/ids';
import { ActionKey, SignalIdKey, SymbolKey } from '../src/temporal/search-attributes';
import { summarize, type Summary } from './stats';
import { signalWorkflow } from '../workflows/signal';

export interface FloorSpec {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  redisUrl: string;
  accounts: string[];
  concurrency: number;
  durationSec: number;
  /** Starts before the timed part (not counted), to warm up the connection and the server. */
  warmupStarts: number;
  /** Market entries expire this long after acceptance (the ingress's COMMAND_AGES.marketEntryMs, src/domain/limits.ts). */
  maxSignalAgeMs: number;
  symbol: string;
  volume: number;
}

export interface FloorResult {
  concurrency: number;
  durationSec: number;
  elapsedMs: number;
  starts: number;
  errors: number;
  firstError: string | null;
  startsPerSec: number;
  /** client.workflow.start alone. */
  startLatencyMs: Summary;
  /** Sequence number (one Redis round trip) plus the start: the whole cost of one signal here. */
  signalLatencyMs: Summary;
  signalIds: string[];
}

async function main(): Promise<void> {
  const [specFile, outFile] = process.argv.slice(2);
  if (!specFile || !outFile) throw new Error('usage: floor.js SPEC.json OUT.json');
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as FloorSpec;
  process.stdin.on('end', () => process.exit(3));
  process.stdin.on('error', () => process.exit(3));
  process.stdin.resume();
  if (!(spec.durationSec > 0 && spec.durationSec <= 600)) throw new Error('durationSec must be in (0, 600]');

  const redis = new Redis(spec.redisUrl, { connectionName: 'bench-floor', maxRetriesPerRequest: 1 });
  const connection = await Connection.connect({ address: spec.temporalAddress, connectTimeout: 5_000 });
  const client = new Client({ connection, namespace: spec.namespace });
  const sequencer = new RedisAccountSequencer(redis);
  const registry = new RedisRegistry(redis);
  const accounts = (await registry.getAccounts(spec.accounts)).map((a, i) => {
    if (!a) throw new Error(`account ${spec.accounts[i]} is not in the registry`);
    return accountSnapshot(a);
  });

  let n = 0;
  const startOne = async (): Promise<{ startMs: number; totalMs: number; signalId: string }> => {
    const account = accounts[n++ % accounts.length]!;
    const t0 = performance.now();
    const acceptedAtMs = Date.now();
    const expiresAtMs = acceptedAtMs + (account.risk.maxSignalAgeMs ?? spec.maxSignalAgeMs);
    const [seq] = (await sequencer.next([{ accountId: account.id, deadlineMs: expiresAtMs }])).map((n) => n.seq);
    const signalId = `sig_${randomBytes(16).toString('hex')}`;
    const input: SignalWorkflowInput = {
      signalId,
      correlationId: `bench-floor-${signalId.slice(4, 16)}`,
      acceptedAt: new Date(acceptedAtMs).toISOString(),
      signal: { action: 'buy', symbol: spec.symbol, volume: spec.volume },
      targets: [{ account, seq: seq!, expiresAt: new Date(expiresAtMs).toISOString() }],
    };
    const t1 = performance.now();
    await client.workflow.start(signalWorkflow, {
      taskQueue: spec.taskQueue,
      workflowId: signalWorkflowId(signalId),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      memo: { correlationId: input.correlationId, origin: null },
      typedSearchAttributes: [
        { key: SignalIdKey, value: signalId },
        { key: ActionKey, value: 'buy' },
        { key: SymbolKey, value: spec.symbol },
      ],
    });
    const t2 = performance.now();
    return { startMs: t2 - t1, totalMs: t2 - t0, signalId };
  };

  // Warm-up, not counted.
  for (let i = 0; i < spec.warmupStarts; i += spec.concurrency) {
    await Promise.all(Array.from({ length: Math.min(spec.concurrency, spec.warmupStarts - i) }, () => startOne()));
  }

  const startLatencies: number[] = [];
  const signalLatencies: number[] = [];
  const signalIds: string[] = [];
  let errors = 0;
  let firstError: string | null = null;
  const started = performance.now();
  const deadline = started + spec.durationSec * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      try {
        const r = await startOne();
        startLatencies.push(r.startMs);
        signalLatencies.push(r.totalMs);
        signalIds.push(r.signalId);
      } catch (err) {
        errors++;
        firstError ??= String((err as Error)?.message ?? err);
        if (errors > 1000) throw new Error(`floor: too many start errors; first: ${firstError}`);
      }
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, loop));
  const elapsedMs = performance.now() - started;

  const result: FloorResult = {
    concurrency: spec.concurrency,
    durationSec: spec.durationSec,
    elapsedMs,
    starts: startLatencies.length,
    errors,
    firstError,
    startsPerSec: startLatencies.length / (elapsedMs / 1000),
    startLatencyMs: summarize(startLatencies),
    signalLatencyMs: summarize(signalLatencies),
    signalIds,
  };
  fs.writeFileSync(`${outFile}.tmp`, JSON.stringify(result));
  fs.renameSync(`${outFile}.tmp`, outFile);
  await connection.close();
  redis.disconnect();
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`floor: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
