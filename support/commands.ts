import type { Cluster, Redis } from 'ioredis';
import { REDELIVER_AFTER_MS, RedisCommandQueue } from '../src/bridge/queue';
import type { BridgeCommand } from '../src/domain/bridge-protocol';
import type { ReplicaAck } from '../src/redis';

/** A bridge command as a workflow would queue it: a 0.01 lot EURUSD buy, numbered `seq`, valid until `deadlineMs`. */
export function buyCommand(accountId: string, seq: number, deadlineMs: number, signalPrefix = 'sig-test'): BridgeCommand {
  return {
    commandId: `signal/${signalPrefix}-${seq}/account/${accountId}`,
    seq,
    signalId: `${signalPrefix}-${seq}`,
    accountId,
    action: 'buy',
    symbol: 'EURUSD',
    volume: 0.01,
    acceptedAt: new Date().toISOString(),
    expiresAt: new Date(deadlineMs).toISOString(),
  };
}

/** The command queue as the service builds it (redelivery after REDELIVER_AFTER_MS). */
export function commandQueue(redis: Redis | Cluster, replicaAck?: ReplicaAck): RedisCommandQueue {
  return new RedisCommandQueue(redis, { redeliverAfterMs: REDELIVER_AFTER_MS, replicaAck });
}
