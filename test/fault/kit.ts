/**
 * The fault-injection suite's kit in one import (test/fault/*.test.ts): registries (registry.ts), bounded load
 * (requests.ts), the paper bridge's ledger (ledger.ts), Temporal (temporal.ts), a read-only look at a command's
 * delivery state in Redis (below), and the shared helpers of every suite (test/helpers: the poll, the Temporal
 * client, commandIdOf).
 *
 * Not a test file (jest picks up *.test.ts only).
 */
import { Redis } from 'ioredis';
import { bridgeKeys } from '../../src/redis-keys';

export { httpGet, httpPost } from '../../support/processes';
export { commandIdOf } from '../helpers/commands';
export { pollRetries, pollUntilReported } from '../helpers/poll';
export { temporalClient, type TemporalView } from '../helpers/temporal';
export * from './registry';
export * from './requests';
export * from './ledger';
export * from './temporal';

// Redis (read only): the command queue's delivery marks, to know a bridge has taken a command

export interface CommandState {
  exists: boolean;
  deliveredAt?: number;
  reported: boolean;
}

export async function commandState(redis: Redis, accountId: string, commandId: string): Promise<CommandState> {
  // Key layout of src/bridge/queue.ts: es:bc:{<account>}:<commandId>, fields command, deliveredAt, session, report.
  const [command, deliveredAt, report] = await redis.hmget(bridgeKeys.commandRecord(accountId, commandId), 'command', 'deliveredAt', 'report');
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
