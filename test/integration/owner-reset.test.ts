import { startStack, type Fixture, type Stack } from '../helpers/stack';
import { asBrowser, ownerKeyFile, signedInOwner, type OwnerBrowser } from '../helpers/owner';
import { adminCli, adminCliJson } from '../helpers/admin';
import { get, post, send } from '../../support/http';
import { hashCredential } from '../../src/registry/credentials';
import { OwnerStore } from '../../src/owners/owner-store';

/**
 * `owner reset` over HTTP against the real Redis and Temporal: the secrets, tokens and bridge tokens made through the
 * owner's sessions and API keys stop working; those the operator imported keep working; each revocation is audited.
 */
let stack: Stack;
let f: Fixture;
let browser: OwnerBrowser;
/** Another owner, never reset: the records of what it makes. */
let other: { f: Fixture; browser: OwnerBrowser };
const url = (p: string) => `${stack.ingress.url}${p}`;
const id = (value: string) => hashCredential(value).slice(0, 12);
const buy = (accountId: string, secret: string) => post(url(`/webhook/custom/${accountId}`), { secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
const poll = (signalId: string, token: string) => get(url(`/v1/signals/${signalId}`), { authorization: `Bearer ${token}` });
const hello = (token: string) => post(url('/bridge/v1/hello'), { platform: 'mt5', bridgeVersion: '2.0.0' }, { authorization: `Bearer ${token}` });

beforeAll(async () => {
  stack = await startStack({ env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
  ({ f, browser } = await signedInOwner(stack, [{}, {}]));
  other = await signedInOwner(stack, [{}]);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

test('a reset revokes every credential made through the owner API, lists and audits each, and leaves the imported ones', async () => {
  const [imported, rotatedAccount] = f.accounts as [Fixture['accounts'][0], Fixture['accounts'][0]];
  // Made while signed in: a secret and a new bridge token.
  const secret = await asBrowser(browser, 'POST', url('/v1/owner/secrets'), { accounts: [imported.id] });
  expect(secret.status).toBe(201);
  const rotated = await asBrowser(browser, 'POST', url(`/v1/owner/accounts/${rotatedAccount.id}/bridge-token`));
  expect(rotated.status).toBe(201);
  // Made with an owner API key: a token and a new account (with its bridge token).
  const key = await asBrowser(browser, 'POST', url('/v1/owner/api-keys'), { name: 'automation' });
  const byKey = { authorization: `Bearer ${key.body.value as string}` };
  const token = await send('POST', url('/v1/owner/tokens'), { accounts: [imported.id] }, byKey);
  expect(token.status).toBe(201);
  const added = await send('POST', url('/v1/owner/accounts'), { name: 'added', platform: 'mt5' }, byKey);
  expect(added.status).toBe(201);

  // Before the reset, each works.
  const before = await buy(imported.id, secret.body.value as string);
  expect(before.status).toBe(202);
  expect((await poll(before.body.signalId as string, token.body.value as string)).status).toBe(200);
  expect((await hello(rotated.body.value as string)).status).toBe(200);
  expect((await hello(added.body.bridgeToken as string)).status).toBe(200);

  const reset = await adminCliJson<{ revoked: Record<string, unknown>[] }>(['owner', 'reset', f.owner], stack.config.redis.url);
  // What was made through the owner API is refused.
  expect((await buy(imported.id, secret.body.value as string)).status).toBe(401);
  expect((await poll(before.body.signalId as string, token.body.value as string)).status).toBe(401);
  expect((await hello(rotated.body.value as string)).status).toBe(401);
  expect((await hello(added.body.bridgeToken as string)).status).toBe(401);
  // What the operator imported still works.
  const importedSignal = await buy(imported.id, f.secret);
  expect(importedSignal.status).toBe(202);
  expect((await poll(importedSignal.body.signalId as string, f.token)).status).toBe(200);
  expect((await hello(imported.bridgeToken)).status).toBe(200);

  // The CLI lists what it revoked.
  const made = { createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) };
  expect([...reset.revoked].sort((x, y) => String(x.kind).localeCompare(String(y.kind)) || String(x.id).localeCompare(String(y.id)))).toEqual(
    [
      { kind: 'bridge_token', id: id(added.body.bridgeToken as string), accounts: [added.body.account.id], createdVia: 'api_key', ...made },
      { kind: 'bridge_token', id: id(rotated.body.value as string), accounts: [rotatedAccount.id], createdVia: 'session', ...made },
      { kind: 'secret', id: secret.body.id, accounts: [imported.id], createdVia: 'session', ...made },
      { kind: 'token', id: token.body.id, accounts: [imported.id], createdVia: 'api_key', ...made },
    ].sort((x, y) => x.kind.localeCompare(y.kind) || String(x.id).localeCompare(String(y.id))),
  );

  // The owner's audit log names each revocation, by the operator, with no value in it.
  const audit = await new OwnerStore(stack.redis).auditLog(f.owner, 4);
  expect(audit.map((e) => [e.by, e.action, e.accountId ?? null, e.detail?.id, e.detail?.reason]).sort()).toEqual(
    [
      ['operator', 'bridge_token.revoke', added.body.account.id, id(added.body.bridgeToken as string), 'owner_reset'],
      ['operator', 'bridge_token.revoke', rotatedAccount.id, id(rotated.body.value as string), 'owner_reset'],
      ['operator', 'secret.revoke', null, secret.body.id, 'owner_reset'],
      ['operator', 'token.revoke', null, token.body.id, 'owner_reset'],
    ].sort(),
  );
  for (const value of [secret.body.value, token.body.value, rotated.body.value, added.body.bridgeToken]) expect(JSON.stringify(audit)).not.toContain(value);

  // A second reset finds nothing more to revoke, and says so.
  const again = await adminCli(['owner', 'reset', f.owner], stack.config.redis.url);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain('No credential made through the owner API was left to revoke.');
}, 60_000);

test('a credential made through the owner API records how and when; its value is stored only as a hash', async () => {
  const secret = await asBrowser(other.browser, 'POST', url('/v1/owner/secrets'), { accounts: [other.f.accounts[0]!.id] });
  const key = await asBrowser(other.browser, 'POST', url('/v1/owner/api-keys'), { name: 'recorded' });
  const token = await send('POST', url('/v1/owner/tokens'), { accounts: [other.f.accounts[0]!.id] }, { authorization: `Bearer ${key.body.value as string}` });
  const record = async (kind: string, value: string) => JSON.parse((await stack.redis.get(`es:${kind}:${hashCredential(value)}`))!) as Record<string, unknown>;
  const secretRecord = await record('secret', secret.body.value as string);
  expect(secretRecord).toEqual({
    hash: hashCredential(secret.body.value as string),
    owner: other.f.owner,
    accounts: [other.f.accounts[0]!.id],
    createdVia: 'session',
    createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  });
  expect(await record('token', token.body.value as string)).toMatchObject({ createdVia: 'api_key', suspendedUntil: null });
  // One the operator imported records nothing of the kind.
  expect(Object.keys(await record('secret', other.f.secret)).sort()).toEqual(['accounts', 'hash', 'owner']);
});
