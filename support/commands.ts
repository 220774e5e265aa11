import type { Cluster, Redis } from 'ioredis';
import { RedisCommandQueue } from '../src/bridge/queue';
import { envSchema } from '../src/config';
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

/** The command queue as the service builds it when BRIDGE_REDELIVER_AFTER_MS is unset. */
export function commandQueue(redis: Redis | Cluster, replicaAck?: ReplicaAck): RedisCommandQueue {
  return new RedisCommandQueue(redis, { redeliverAfterMs: envSchema.shape.BRIDGE_REDELIVER_AFTER_MS.parse(undefined), replicaAck });
}
