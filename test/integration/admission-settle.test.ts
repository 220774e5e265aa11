import { createActivities } from '../../activities';
import { RedisCommandQueue } from '../../src/bridge/queue';
import { RedisAccountSequencer } from '../../src/bridge/ordering';
import { RedisAdmissionLedger } from '../../src/signals/admission';
import { post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';

/**
 * Admission's ledger counts an accepted (signal, account) as pending until its account workflow has settled the
 * command's fate. A workflow whose adoption of the command ran out of time (Redis away past the command's expiry, as in
 * test/fault/cluster-faults.test.ts) withdraws it instead: that answer settles it too, whatever it is, or the pair
 * would count as late until the ledger's horizon (the longest command lifetime) and hold the door shut that long.
 */
describe("admission's ledger and a withdrawal", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ worker: false, env: {} });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('when the bridge has taken a command dispatched at acceptance and the workflow withdraws it (delivered), then the pair is no longer pending', async () => {
    const f = await seedOwner(stack.registry);
    const bridge = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await bridge.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
    expect(res.status).toBe(202);
    const [command] = await bridge.nextCommands(1);
    const ledger = new RedisAdmissionLedger(stack.redis, stack.config.temporal.taskQueue, stack.config.bridge.defaultCommandTtlMs);
    const pendingOf = async () => (await ledger.backlog(Date.now(), 1)).pending;
    expect(await pendingOf()).toBe(1);

    const activities = createActivities({
      queue: new RedisCommandQueue(stack.redis, { redeliverAfterMs: stack.config.redis.redeliverAfterMs }),
      sequencer: new RedisAccountSequencer(stack.redis),
      admission: ledger,
    });
    expect(await activities.withdrawCommand(f.accounts[0]!.id, command!.commandId, false)).toBe('delivered');
    expect(await pendingOf()).toBe(0);
  });
});
