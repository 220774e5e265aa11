import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashCredential, newCredential } from '../../src/registry/credentials';
import { accountSchema } from '../../src/domain/account';
import { adminCli, adminCliJson } from '../helpers/admin';
import { get, post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';
import { ScriptedTerminal } from '../helpers/terminal';

/**
 * Issue 12 item 7: API tokens have an owner like secrets, and an account that goes to another owner leaves the old
 * owner's secrets, tokens and the account's bridge token behind. Driven through the admin CLI's code path and HTTP.
 */
describe('account ownership', () => {
  let stack: Stack;
  let redisUrl: string;
  beforeAll(async () => {
    stack = await startStack();
    redisUrl = stack.config.redis.url;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const poll = (signalId: string, token: string) => get(`${stack.ingress.url}/v1/signals/${signalId}`, { authorization: `Bearer ${token}` });
  const buy = (secret: string) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });

  /** A broadcast buy both of the owner's accounts fill; returns its signalId once the poll shows both. */
  async function filledOnBoth(f: Awaited<ReturnType<typeof seedOwner>>): Promise<string> {
    const terminals = f.accounts.map((a) => new ScriptedTerminal(stack.ingress.url, a.bridgeToken));
    for (const t of terminals) await t.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom`, buy(f.secret));
    expect(res.status).toBe(202);
    expect(res.body.accountsResolved).toBe(2);
    for (const [i, t] of terminals.entries()) {
      const [command] = await t.nextCommands(1);
      await t.report([{ commandId: command!.commandId, status: 'filled', ticket: `7${i}`, price: 1.1 }]);
    }
    await reportedStatus(stack.ingress.url, f.token, res.body.signalId, { count: 2 });
    return res.body.signalId as string;
  }

  test('when a token would grant accounts of two owners, then the admin CLI refuses it and stores nothing', async () => {
    const alice = await seedOwner(stack.registry);
    const bob = await seedOwner(stack.registry);
    const mixed = await adminCli(['token', 'create', '--accounts', `${alice.accounts[0]!.id},${bob.accounts[0]!.id}`], redisUrl);
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toBe(
      `error: the accounts belong to ${alice.owner}, ${bob.owner}: a token may grant only one owner's accounts; make one token per owner\n`,
    );
    const other = await adminCli(['token', 'create', '--owner', bob.owner, '--accounts', alice.accounts[0]!.id], redisUrl);
    expect(other.code).toBe(1);
    expect(other.stderr).toBe(
      `error: account ${alice.accounts[0]!.id} belongs to another owner: a token of ${bob.owner} may link only ${bob.owner}'s accounts\n`,
    );
    const tokens = await adminCliJson<{ owner: string }[]>(['token', 'list', '--owner', bob.owner], redisUrl);
    expect(tokens).toHaveLength(1); // only the one seedOwner made

    const own = await adminCliJson<{ owner: string; token: string }>(['token', 'create', '--accounts', alice.accounts[0]!.id], redisUrl);
    expect(own.owner).toBe(alice.owner);
    expect((await poll('sig_0123456789abcdef0123456789abcdef', own.token)).status).toBe(200);
  });

  test('when an import document has a token without an owner, then it takes the one owner of its accounts; spanning two owners, the whole document is refused', async () => {
    const alice = await seedOwner(stack.registry);
    const bob = await seedOwner(stack.registry);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ownership-'));
    const importing = async (tokens: Record<string, unknown>[]) => {
      const file = path.join(dir, `${randomBytes(4).toString('hex')}.json`);
      fs.writeFileSync(file, JSON.stringify({ tokens }));
      return adminCli(['import', file], redisUrl);
    };
    try {
      const own = newCredential('tok');
      expect((await importing([{ token: own, accounts: [alice.accounts[0]!.id] }])).code).toBe(0);
      expect(await stack.registry.authenticateToken(own)).toMatchObject({ owner: alice.owner });

      const mixed = newCredential('tok');
      const refused = await importing([{ token: mixed, accounts: [alice.accounts[0]!.id, bob.accounts[0]!.id] }]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/a token grants accounts of several owners .*: make one token per owner; nothing was imported\n$/);
      const named = await importing([{ token: mixed, owner: bob.owner, accounts: [alice.accounts[0]!.id] }]);
      expect(named.code).toBe(1);
      expect(named.stderr).toMatch(new RegExp(`token of ${bob.owner} links account ${alice.accounts[0]!.id} of another owner`));
      expect(await stack.registry.authenticateToken(mixed)).toBeNull();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("when an account goes to another owner, then the old owner's token no longer reads it, its secret no longer trades it, and its old bridge token gets 401", async () => {
    const alice = await seedOwner(stack.registry, [{}, {}]);
    const bob = await seedOwner(stack.registry);
    const [moved, kept] = alice.accounts as [{ id: string; bridgeToken: string }, { id: string; bridgeToken: string }];
    const signalId = await filledOnBoth(alice);
    expect((await poll(signalId, alice.token)).body.accounts.map((a: { accountId: string }) => a.accountId).sort()).toEqual([moved.id, kept.id].sort());

    const changed = await adminCliJson<{ account: { owner: string }; ownerChange: Record<string, unknown> }>(
      ['account', 'set', moved.id, '--owner', bob.owner],
      redisUrl,
    );
    expect(changed.account.owner).toBe(bob.owner);
    expect(changed.ownerChange).toEqual({
      from: alice.owner,
      to: bob.owner,
      secretsUnlinked: [hashCredential(alice.secret).slice(0, 12)],
      tokensUnlinked: [hashCredential(alice.token).slice(0, 12)],
      bridgeToken: 'revoked',
      commands: { withdrawn: [], handedOut: [], notTold: [] },
    });

    const after = await poll(signalId, alice.token);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ status: 'reported', reported: 1, accounts: [{ accountId: kept.id, outcome: 'filled' }] });

    const bridgeAuth = { authorization: `Bearer ${moved.bridgeToken}` };
    expect((await get(`${stack.ingress.url}/bridge/v1/commands?waitMs=0`, bridgeAuth)).status).toBe(401);
    expect((await post(`${stack.ingress.url}/bridge/v1/hello`, { platform: 'mt5', bridgeVersion: '2.1.0' }, bridgeAuth)).status).toBe(401);

    expect((await post(`${stack.ingress.url}/webhook/custom/${moved.id}`, buy(alice.secret))).status).toBe(401);
    const broadcast = await post(`${stack.ingress.url}/webhook/custom`, buy(alice.secret));
    expect(broadcast.body.accountsResolved).toBe(1);

    const shown = await adminCliJson<{ secrets: unknown[]; tokens: unknown[]; bridgeToken: boolean }>(['account', 'show', moved.id], redisUrl);
    expect(shown).toMatchObject({ secrets: [], tokens: [], bridgeToken: false });

    // The new owner makes the account's new bridge token and its own token for it.
    const rotated = await adminCliJson<{ bridgeToken: string }>(['account', 'set', moved.id, '--new-bridge-token'], redisUrl);
    expect(
      (await post(`${stack.ingress.url}/bridge/v1/hello`, { platform: 'mt5', bridgeVersion: '2.1.0' }, { authorization: `Bearer ${rotated.bridgeToken}` }))
        .status,
    ).toBe(200);
    const bobs = await adminCliJson<{ owner: string }>(['token', 'create', '--accounts', `${moved.id},${bob.accounts[0]!.id}`], redisUrl);
    expect(bobs.owner).toBe(bob.owner);
  });

  test('when an owner change is given a new bridge token in the same command, then only the new token works', async () => {
    const alice = await seedOwner(stack.registry);
    const bob = await seedOwner(stack.registry);
    const account = alice.accounts[0]!;
    const changed = await adminCliJson<{ bridgeToken: string; ownerChange: { bridgeToken: string } }>(
      ['account', 'set', account.id, '--owner', bob.owner, '--new-bridge-token'],
      redisUrl,
    );
    expect(changed.ownerChange.bridgeToken).toBe('replaced');
    const hello = (token: string) =>
      post(`${stack.ingress.url}/bridge/v1/hello`, { platform: 'mt5', bridgeVersion: '2.1.0' }, { authorization: `Bearer ${token}` });
    expect((await hello(account.bridgeToken)).status).toBe(401);
    expect((await hello(changed.bridgeToken)).status).toBe(200);
  });

  test("when the owner changes but the old owner's links were not yet removed, then the poll still hides the account from the old owner's token", async () => {
    const alice = await seedOwner(stack.registry, [{}, {}]);
    const bob = await seedOwner(stack.registry);
    const signalId = await filledOnBoth(alice);
    // The registry step alone, as if the admin CLI died before unlinking.
    expect(await stack.registry.updateAccount(alice.accounts[0]!.id, { owner: bob.owner })).toBe('owner_changed');
    expect((await stack.registry.authenticateToken(alice.token))?.accounts).toContain(alice.accounts[0]!.id);
    const after = await poll(signalId, alice.token);
    expect(after.body).toMatchObject({ reported: 1, accounts: [{ accountId: alice.accounts[1]!.id }] });
    expect((await post(`${stack.ingress.url}/webhook/custom/${alice.accounts[0]!.id}`, buy(alice.secret))).status).toBe(401);
  });

  test('when a registry written before this version is used, then it keeps working over HTTP and migrate brings it up to date', async () => {
    const tag = randomBytes(4).toString('hex');
    const carol = `carol-${tag}`;
    const dave = `dave-${tag}`;
    const ids = { c: `legacy-${tag}-c`, d: `legacy-${tag}-d` };
    const bridgeToken = newCredential('brg');
    const secret = newCredential('whsec');
    const ownToken = newCredential('tok');
    const mixedToken = newCredential('tok');
    // The storage shape of the previous version: accounts as one JSON string each, tokens without an owner.
    // The previous version stored JSON.stringify(account), defaults filled in by the schema.
    const legacyAccount = (id: string, owner: string) =>
      JSON.stringify(accountSchema.parse({ id, owner, platform: 'mt5', status: 'locked', bridgeVersion: '2.0.0' }));
    const r = stack.redis;
    await r.set(`es:account:${ids.c}`, legacyAccount(ids.c, carol));
    await r.set(`es:account:${ids.d}`, legacyAccount(ids.d, dave));
    await r.sadd('es:accounts', ids.c, ids.d);
    await r.set(`es:bridge:${hashCredential(bridgeToken)}`, JSON.stringify({ accountId: ids.c, hash: hashCredential(bridgeToken) }));
    await r.set(`es:account-bridge:${ids.c}`, hashCredential(bridgeToken));
    await r.set(`es:secret:${hashCredential(secret)}`, JSON.stringify({ hash: hashCredential(secret), owner: carol, accounts: [ids.c] }));
    await r.set(`es:token:${hashCredential(ownToken)}`, JSON.stringify({ hash: hashCredential(ownToken), accounts: [ids.c], suspendedUntil: null }));
    await r.set(`es:token:${hashCredential(mixedToken)}`, JSON.stringify({ hash: hashCredential(mixedToken), accounts: [ids.c, ids.d], suspendedUntil: null }));

    // Read as they are: the locked legacy account answers 403, the token of one owner reads, the mixed one does not.
    expect((await post(`${stack.ingress.url}/webhook/custom/${ids.c}`, buy(secret))).status).toBe(403);
    const unknownSignal = 'sig_0123456789abcdef0123456789abcdef';
    expect((await poll(unknownSignal, ownToken)).status).toBe(200);
    expect((await poll(unknownSignal, mixedToken)).status).toBe(401);

    // A hello writes beside the record, not in it: the legacy record stays as it was, and the account keeps its lock and
    // reads the version the bridge announced.
    expect(
      (await post(`${stack.ingress.url}/bridge/v1/hello`, { platform: 'mt5', bridgeVersion: '2.1.0' }, { authorization: `Bearer ${bridgeToken}` })).status,
    ).toBe(200);
    expect(await r.type(`es:account:${ids.c}`)).toBe('string');
    expect(await stack.registry.getAccount(ids.c)).toMatchObject({ owner: carol, status: 'locked', bridgeVersion: '2.1.0', risk: { blockedSymbols: [] } });

    const migrated = await adminCliJson<{ accountsConverted: number; tokensRevoked: string[] }>(['migrate'], redisUrl);
    expect(migrated.accountsConverted).toBeGreaterThanOrEqual(1);
    expect(migrated.tokensRevoked).toContain(hashCredential(mixedToken).slice(0, 12));
    expect(await r.type(`es:account:${ids.d}`)).toBe('hash');
    expect(JSON.parse((await r.get(`es:token:${hashCredential(ownToken)}`))!)).toMatchObject({ owner: carol });
    expect(await r.exists(`es:token:${hashCredential(mixedToken)}`)).toBe(0);
    expect(await stack.registry.getAccount(ids.d)).toMatchObject({ owner: dave, status: 'locked' });

    // Idempotent: a second run changes nothing of these.
    const again = await adminCliJson<{ tokensRevoked: string[] }>(['migrate'], redisUrl);
    expect(again.tokensRevoked).not.toContain(hashCredential(mixedToken).slice(0, 12));
    expect((await adminCli(['account', 'unlock', ids.c], redisUrl)).code).toBe(0);
    expect((await post(`${stack.ingress.url}/webhook/custom/${ids.c}`, buy(secret))).status).toBe(202);
  });
});
