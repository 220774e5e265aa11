import type { Redis } from 'ioredis';
import { ownerKeys } from '../redis-keys';

/**
 * The address the owners' links name (the admin CLI's setup links). The ingress knows it: PUBLIC_URL, else its own
 * HOST and the port it listens on. An admin CLI run from another shell has neither (`make start` sets PUBLIC_URL and
 * PORT for the processes it launches only), so the ingress records its address in the registry's Redis when it
 * starts and the CLI reads it there, unless its own environment names one (PUBLIC_URL or PORT).
 */
export function recordPublicUrl(redis: Redis, url: string): void {
  // Off the start path: an ingress starts while Redis is down (it answers 503 until Redis is back), so a write that
  // fails is made again when the connection is next ready.
  const write = (): void => {
    redis.set(ownerKeys.publicUrl, url).catch(() => redis.once('ready', write));
  };
  write();
}

export async function linkBaseUrl(redis: Redis, env: NodeJS.ProcessEnv, configured: string): Promise<string> {
  const own = env.PUBLIC_URL !== undefined || env.PORT !== undefined;
  const base = own ? configured : ((await redis.get(ownerKeys.publicUrl)) ?? configured);
  return base.replace(/\/+$/, '');
}
