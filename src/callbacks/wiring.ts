import type { Redis } from 'ioredis';
import type { Config } from '../config';
import type { AttemptDeps } from './attempt';
import { RedisAttemptLog } from './attempts';
import { RedisEndpointStore } from './endpoints';
import { ownerCallbacks, type OwnerCallbacks } from './owner-callbacks';
import { SecretBox } from './secret-box';

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
