import { startIngress } from '../../src/server';
import { RedisRegistry } from '../../src/registry/registry';
import { Redis } from 'ioredis';
import { seedOwner, testConfig } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { testEnv } from '../../support/env';
import { waitFor } from '../../support/infra';
import { bridgeKeys } from '../../src/redis-keys';
import { LONGEST_POLL_MS, expectWokenBeforeItsEnd } from '../helpers/long-poll';

describe('ingress shutdown with bridges connected', () => {
  test('when the ingress stops while a bridge long-polls on a kept-alive connection, then the poll is answered and the ingress is down long before the poll would have ended', async () => {
    const redis = new Redis(testEnv().redisUrl);
    const f = await seedOwner(new RedisRegistry(redis));
    const ingress = await startIngress(testConfig());
    try {
      const terminal = new ScriptedTerminal(ingress.url, f.accounts[0]!.bridgeToken);
      await terminal.hello();
      const polling = terminal.commands(LONGEST_POLL_MS);
      // The long-poll is waiting when the stop begins: the ingress subscribed to the account's channel to wait.
      await waitFor(
        'the long-poll to wait',
        async () => Number(((await redis.pubsub('NUMSUB', bridgeKeys.wakeChannel(f.accounts[0]!.id))) as [string, number])[1]) === 1,
        5_000,
      );
      const started = Date.now();
      await ingress.close();
      const stoppedIn = Date.now() - started;
      await expect(polling).resolves.toEqual([]);
      // Not a speed check: stopping waited for no long-poll.
      expectWokenBeforeItsEnd(stoppedIn, 'ingress stopped');
    } finally {
      redis.disconnect();
    }
  });
});
