import { setTimeout as sleep } from 'node:timers/promises';
import type { Stack } from './stack';

/**
 * Holds the ingress's session-hello budget of 127.0.0.1 spent (src/http/routes/bridge-session.ts: a fixed window of a
 * second counted in Redis) until `done()`: the window's count is set past the budget every 100 ms for 600 ms, so it
 * lapses before a refused hello's 1 s Retry-After ends. Spending it with hellos of one's own would race the bridge's
 * hello at each window's start.
 */
export async function holdHelloBudget(stack: Stack, done: () => boolean): Promise<void> {
  const window = `${stack.config.limits.keyPrefix}bridge-session-hello:ip:127.0.0.1`;
  try {
    while (!done()) {
      await stack.redis.set(window, '1000', 'PX', 600);
      await sleep(100);
    }
  } catch {
    // the stack stopped under it (its test failed): nothing to hold any more
  }
}
