import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Client, type Connection } from '@temporalio/client';
import { temporalClient, waitForAccountWorkflowToHoldCommand, workflowResult } from '../helpers/temporal';
import { newCredential } from '../../src/registry/credentials';
import type { AccountOutcome } from '../../src/domain/outcome';
import { testEnv } from '../../support/env';
import { waitFor } from '../../support/infra';
import { adminCliJson } from '../helpers/admin';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * An account that changes owner while its bridge is offline (docs/registry.md, "Changing an account's owner"): the
 * old owner's queued command is withdrawn, its signal ends rejected `account_owner_changed` at once (not at its
 * expiry), and the new owner's bridge never receives it. Real Temporal, real Redis, the admin CLI's code path.
 */
describe("an account's owner change withdraws the commands no bridge has taken", () => {
  let stack: Stack;
  let connection: Connection;
  let client: Client;
  const temporalEnv = () => ({ TEMPORAL_ADDRESS: testEnv().temporalAddress, TEMPORAL_NAMESPACE: testEnv().temporalNamespace });
  beforeAll(async () => {
    stack = await startStack();
    ({ connection, client } = await temporalClient());
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
  });

  /** A buy for the owner's first account, accepted while no bridge polls; its commandId once it is queued and its workflow runs. */
  async function queuedBuy(owner: Fixture): Promise<{ commandId: string; expiresAt: number }> {
    const accountId = owner.accounts[0]!.id;
    const res = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: owner.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const commandId = `signal/${res.body.signalId as string}/account/${accountId}`;
    await waitFor('the command to be queued', async () => (await stack.redis.zscore(bridgeKeys.commandQueue(accountId), commandId)) !== null, 15_000);
    // Queued at acceptance, before its workflow runs (dispatch at acceptance): here the workflow is there to be told.
    await waitForAccountWorkflowToHoldCommand(client, commandId);
    const command = JSON.parse((await stack.redis.hget(bridgeKeys.commandRecord(accountId, commandId), 'command'))!) as { expiresAt: string };
    return { commandId, expiresAt: Date.parse(command.expiresAt) };
  }

  /** The signal's outcome on the account, as its account workflow ended it. */
  // The account workflow may start after the bridge has its command (dispatch at acceptance): wait for it to exist.
  const outcomeOf = (commandId: string) => workflowResult<AccountOutcome>(client, commandId);

  /** The new bridge's hello and one poll: what it is handed. */
  async function handedTo(bridgeToken: string): Promise<string[]> {
    const bridge = new ScriptedTerminal(stack.ingress.url, bridgeToken);
    await bridge.hello();
    return (await bridge.commands(0)).map((c) => c.commandId);
  }

  test('when `account set --owner` moves it, then the queued buy ends rejected account_owner_changed before its expiry and the new bridge is handed nothing', async () => {
    const alice = await seedOwner(stack.registry);
    const bob = await seedOwner(stack.registry);
    const { commandId, expiresAt } = await queuedBuy(alice);
    const changedAt = Date.now();
    const changed = await adminCliJson<{ bridgeToken: string; ownerChange: { commands: Record<string, string[]> } }>(
      ['account', 'set', alice.accounts[0]!.id, '--owner', bob.owner, '--new-bridge-token'],
      stack.config.redis.url,
      temporalEnv(),
    );
    expect(changed.ownerChange.commands).toEqual({ withdrawn: [commandId], handedOut: [], notTold: [] });
    const outcome = await outcomeOf(commandId);
    expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'account_owner_changed', ticket: null });
    // Told at once: it did not wait for its expiry (30 s after acceptance) to find the command withdrawn.
    expect(Date.parse(outcome.occurredAt)).toBeLessThan(Math.min(expiresAt, changedAt + 10_000));
    expect(await handedTo(changed.bridgeToken)).toEqual([]);
    expect(await stack.redis.hget(bridgeKeys.commandRecord(alice.accounts[0]!.id, commandId), 'withdrawn')).toBe('1');
  });

  test('when an import document gives it to another owner, then the same: rejected account_owner_changed, nothing for the new bridge', async () => {
    const alice = await seedOwner(stack.registry);
    const bob = await seedOwner(stack.registry);
    const { commandId } = await queuedBuy(alice);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'owner-change-'));
    const file = path.join(dir, 'move.json');
    const bridgeToken = newCredential('brg');
    fs.writeFileSync(file, JSON.stringify({ accounts: [{ ...alice.doc.accounts[0], owner: bob.owner, bridgeToken }] }));
    try {
      const imported = await adminCliJson<{ ownerChanges: { accountId: string; commands: Record<string, string[]> }[] }>(
        ['import', file],
        stack.config.redis.url,
        temporalEnv(),
      );
      expect(imported.ownerChanges).toMatchObject([{ accountId: alice.accounts[0]!.id, commands: { withdrawn: [commandId], handedOut: [], notTold: [] } }]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(await outcomeOf(commandId)).toMatchObject({ outcome: 'rejected', reason: 'account_owner_changed' });
    expect(await handedTo(bridgeToken)).toEqual([]);
  });

  test('when the bridge had already taken the command, then it is not withdrawn: the CLI says so and the report decides the signal', async () => {
    const alice = await seedOwner(stack.registry);
    const bob = await seedOwner(stack.registry);
    const accountId = alice.accounts[0]!.id;
    const bridge = new ScriptedTerminal(stack.ingress.url, alice.accounts[0]!.bridgeToken);
    await bridge.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: alice.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const [command] = await bridge.nextCommands(1);
    const changed = await adminCliJson<{ bridgeToken: string; ownerChange: { commands: Record<string, string[]> } }>(
      ['account', 'set', accountId, '--owner', bob.owner, '--new-bridge-token'],
      stack.config.redis.url,
      temporalEnv(),
    );
    expect(changed.ownerChange.commands).toEqual({ withdrawn: [], handedOut: [command!.commandId], notTold: [] });
    // The terminal executed it before the change; with the account's new token it reports what it did.
    const moved = new ScriptedTerminal(stack.ingress.url, changed.bridgeToken);
    await moved.hello();
    await moved.report([{ commandId: command!.commandId, status: 'filled', ticket: '9001', price: 1.1 }]);
    expect(await outcomeOf(command!.commandId)).toMatchObject({ outcome: 'filled', ticket: '9001' });
  });
});
