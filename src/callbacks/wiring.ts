import type { Redis } from 'ioredis';
import type { Config } from '../config';
import type { AttemptDeps } from './attempt';
import { RedisAttemptLog } from './attempts';
import { RedisEndpointStore } from './endpoints';
import { ownerCallbacks, type OwnerCallbacks } from './owner-callbacks';
import { SecretBox } from './secret-box';
import { tradeEventPublisher, type PublishTradeEvent } from './trade-events';
import { RedisTradeCallbackCap } from './trade-coalescing';
import { TemporalCallbackDeliveries } from '../temporal/callback-deliveries';
import type { Regions } from '../temporal/regions';
import type { Registry } from '../registry/registry';

/** The callbacks' parts from the configuration, for the worker (attempts), the CLI and the owner API (use cases). */
export function callbackAttemptDeps(config: Config, redis: Redis): AttemptDeps {
  const c = config.callbacks;
  return {
    endpoints: new RedisEndpointStore(redis),
    attempts: new RedisAttemptLog(redis, c.attemptsKeep),
    box: c.sealingKeyFile === undefined ? undefined : SecretBox.fromFile(c.sealingKeyFile, 'CALLBACK_SECRET_KEY_FILE'),
    guard: c.guard,
    post: c.post,
  };
}

export function ownerCallbacksOf(config: Config, redis: Redis): OwnerCallbacks {
  const deps = callbackAttemptDeps(config, redis);
  return ownerCallbacks({ ...deps, maxEndpointsPerOwner: config.callbacks.maxEndpointsPerOwner });
}

/**
 * publishTradeEvent for the process that records trade events (the ingress): the owner's endpoints and the account
 * from Redis, the delivery started in the account's region. See src/callbacks/trade-events.ts.
 */
export function tradeEventPublisherOf(config: Config, redis: Redis, regions: Regions, registry: Pick<Registry, 'getAccounts'>): PublishTradeEvent {
  return tradeEventPublisher({
    endpoints: new RedisEndpointStore(redis),
    async accountOf(accountId) {
      const [account] = await registry.getAccounts([accountId]);
      return account ? { owner: account.owner, region: account.region } : null;
    },
    deliveries: new TemporalCallbackDeliveries(regions, config.temporal.taskQueue),
    cap: new RedisTradeCallbackCap(redis),
  });
}
