import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { RedisEndpointStore, newEndpointId, ownerKey, type CallbackEndpoint } from '../../src/callbacks/endpoints';
import { RedisAttemptLog, type DeliveryAttempt } from '../../src/callbacks/attempts';
import { ownerCallbacks, CallbackRegistrationRefused } from '../../src/callbacks/owner-callbacks';
import { SecretBox } from '../../src/callbacks/secret-box';
import { secretBinding } from '../../src/callbacks/attempt';
import { signCallback } from '../../src/callbacks/signer';
import { runAdmin } from '../../src/cli/admin';
import { testEnv } from '../../support/env';

/** The endpoint store, the attempt log and the admin verbs against the run's real Redis; owners unique to each test. */

let redis: Redis;
beforeAll(() => {
  redis = new Redis(testEnv().redisUrl);
});
afterAll(() => redis.disconnect());

const owner = () => `owner-${randomBytes(4).toString('hex')}`;
const endpoint = (url: string, enabled = true): CallbackEndpoint => ({
  id: newEndpointId(),
  url,
  sealedSecret: 'v1:x:y:z',
  createdAt: new Date().toISOString(),
  enabled,
});

describe('RedisEndpointStore', () => {
  test('when endpoints are added, then each owner lists only its own, bounded in count', async () => {
    const store = new RedisEndpointStore(redis);
    const [a, b] = [owner(), owner()];
    const first = endpoint('https://a.example/1');
    expect(await store.add(a, first, 2)).toBe('added');
    expect(await store.add(a, endpoint('https://a.example/2'), 2)).toBe('added');
    expect(await store.add(a, endpoint('https://a.example/3'), 2)).toBe('full');
    expect(await store.add(b, endpoint('https://b.example/1'), 2)).toBe('added');
    expect((await store.list(a)).map((e) => e.url)).toEqual(['https://a.example/1', 'https://a.example/2']);
    expect((await store.list(b)).map((e) => e.url)).toEqual(['https://b.example/1']);
    expect(await store.get(a, first.id)).toEqual(first);
    // Another owner's id is not found under this owner.
    expect(await store.get(b, first.id)).toBeNull();
    expect(await store.remove(b, first.id)).toBe(false);
  });

  test('when an endpoint is disabled or removed, then the accept path no longer snapshots it', async () => {
    const store = new RedisEndpointStore(redis);
    const [a, b, none] = [owner(), owner(), owner()];
    const [e1, e2] = [endpoint('https://a.example/1'), endpoint('https://a.example/2')];
    await store.add(a, e1, 5);
    await store.add(a, e2, 5);
    await store.add(b, endpoint('https://b.example/1', false), 5);
    expect(await store.enabledIds([a, b, none])).toEqual([[e1.id, e2.id].sort(), [], []]);
    expect(await store.setEnabled(a, e1.id, false)).toBe(true);
    expect(await store.enabledIds([a])).toEqual([[e2.id]]);
    expect((await store.get(a, e1.id))?.enabled).toBe(false);
    expect(await store.remove(a, e2.id)).toBe(true);
    expect(await store.enabledIds([a])).toEqual([[]]);
    expect(await store.setEnabled(a, e2.id, true)).toBe(false);
  });
});

describe('RedisAttemptLog', () => {
  test('when more attempts are recorded than it keeps, then the newest are listed, newest first, and the key expires', async () => {
    const log = new RedisAttemptLog(redis, { count: 3, seconds: 600 });
    const o = owner();
    const attempt = (n: number): DeliveryAttempt => ({
      at: new Date().toISOString(),
      endpointId: 'ep_aaaaaaaaaaaaaaaa',
      messageId: 'callback:sig_x:acc-1',
      attempt: n,
      status: 500,
      error: null,
      durationMs: 3,
      delivered: false,
    });
    for (let n = 1; n <= 5; n++) await log.record(o, attempt(n));
    expect((await log.recent(o, 10)).map((a) => a.attempt)).toEqual([5, 4, 3]);
    expect((await log.recent(o, 2)).map((a) => a.attempt)).toEqual([5, 4]);
    expect(await redis.ttl(ownerKey(o, 'at'))).toBeGreaterThan(590);
  });
});

describe('registration', () => {
  const box = SecretBox.fromBase64(randomBytes(32).toString('base64'), 'CALLBACK_SECRET_KEY_FILE');
  const depsOf = () => ({
    endpoints: new RedisEndpointStore(redis),
    attempts: new RedisAttemptLog(redis, { count: 10, seconds: 600 }),
    box,
    guard: { allowedOrigins: [], allowHttp: false, maxUrlLength: 64 },
    maxEndpointsPerOwner: 1,
    // DNS is the outside world here: every name resolves to one public address.
    resolve: async () => [{ address: '93.184.216.34', family: 4 }],
  });

  test('when an endpoint is registered, then its secret is shown once, stored only sealed, and signs what the owner verifies', async () => {
    const o = owner();
    const deps = depsOf();
    const callbacks = ownerCallbacks(deps);
    const { endpoint: view, secret } = await callbacks.register(o, 'https://hooks.example.com/outcomes');
    expect(await callbacks.list(o)).toEqual([view]);
    expect(JSON.stringify(await callbacks.list(o))).not.toContain(secret);
    const raw = await redis.hget(ownerKey(o, 'ep'), view.id);
    expect(raw).not.toContain(secret.slice('whsec_'.length));
    const stored = (await deps.endpoints.get(o, view.id))!;
    const opened = box.open(stored.sealedSecret, secretBinding(o, view.id));
    const body = '{"type":"signal.outcome"}';
    expect(new Webhook(secret).verify(body, { ...signCallback(opened, 'm1', new Date(), body) })).toEqual({ type: 'signal.outcome' });
  });

  test('when the URL or the count breaks a rule, or no key is configured, then registration is refused and nothing is stored', async () => {
    const o = owner();
    const deps = depsOf();
    const callbacks = ownerCallbacks(deps);
    const reason = (p: Promise<unknown>) =>
      p.then(
        () => 'registered',
        (err: unknown) => (err instanceof CallbackRegistrationRefused ? err.reason : String(err)),
      );
    expect(await reason(callbacks.register(o, 'http://hooks.example.com/'))).toBe('url_refused');
    expect(await reason(callbacks.register(o, `https://hooks.example.com/${'x'.repeat(64)}`))).toBe('url_refused');
    expect(await reason(callbacks.register(o, 'https://10.0.0.8/'))).toBe('url_refused');
    expect(await reason(ownerCallbacks({ ...deps, box: undefined }).register(o, 'https://hooks.example.com/'))).toBe('not_configured');
    expect(await callbacks.list(o)).toEqual([]);
    expect(await reason(callbacks.register(o, 'https://hooks.example.com/1'))).toBe('registered');
    expect(await reason(callbacks.register(o, 'https://hooks.example.com/2'))).toBe('too_many_endpoints');
  });
});

describe('admin CLI: callback verbs', () => {
  const keyFile = path.join(mkdtempSync(path.join(tmpdir(), 'callback-cli-')), 'key');
  writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  async function admin(args: string[]) {
    let stdout = '';
    let stderr = '';
    const env = {
      REDIS_URL: testEnv().redisUrl,
      CALLBACK_SECRET_KEY_FILE: keyFile,
      CALLBACK_ALLOWED_ORIGINS: 'http://127.0.0.1:9',
      CALLBACK_ALLOW_HTTP: 'true',
    };
    const code = await runAdmin(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stdin: async () => '', env });
    return { code, stdout, stderr };
  }

  test('when an operator adds, lists, reads attempts of and removes an endpoint, then each verb says what it did', async () => {
    const o = owner();
    const added = await admin(['callback', 'add', '--owner', o, '--url', 'http://127.0.0.1:9/hook', '--json']);
    expect(added.code).toBe(0);
    const created = JSON.parse(added.stdout) as { id: string; secret: string; url: string };
    expect(created).toMatchObject({ url: 'http://127.0.0.1:9/hook', secret: expect.stringMatching(/^whsec_/) });
    const listed = await admin(['callback', 'list', '--owner', o]);
    expect(listed.stdout).toContain(created.id);
    expect(listed.stdout).not.toContain(created.secret);
    await new RedisAttemptLog(redis, { count: 10, seconds: 600 }).record(o, {
      at: new Date().toISOString(),
      endpointId: created.id,
      messageId: 'callback:sig_x:acc-1',
      attempt: 2,
      status: 503,
      error: null,
      durationMs: 12,
      delivered: false,
    });
    expect((await admin(['callback', 'disable', '--owner', o, '--id', created.id])).stdout).toBe(`callback endpoint ${created.id} of ${o} disabled\n`);
    expect(await new RedisEndpointStore(redis).enabledIds([o])).toEqual([[]]);
    expect((await admin(['callback', 'enable', '--owner', o, '--id', created.id])).code).toBe(0);
    expect(await new RedisEndpointStore(redis).enabledIds([o])).toEqual([[created.id]]);
    const attempts = await admin(['callback', 'attempts', '--owner', o]);
    expect(attempts.stdout).toMatch(new RegExp(`${created.id}\\s+2\\s+HTTP 503`));
    expect((await admin(['callback', 'remove', '--owner', o, '--id', created.id])).code).toBe(0);
    expect((await admin(['callback', 'list', '--owner', o])).stdout).toContain('no callback endpoints');
    const again = await admin(['callback', 'remove', '--owner', o, '--id', created.id]);
    expect([again.code, again.stderr]).toEqual([1, `error: ${o} has no callback endpoint ${created.id}\n`]);
  });

  test('when the URL reaches a private address, then add exits 1 and says why', async () => {
    const refused = await admin(['callback', 'add', '--owner', owner(), '--url', 'http://192.168.1.10/hook']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('error: callback URL refused: private or reserved address (192.168.1.10)\n');
  });
});
