import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { hashCredential } from '../../src/registry/credentials';
import { RedisRegistry } from '../../src/registry/registry';
import { REPO_ROOT, startRedis, type RedisServer } from '../../support/infra';

/**
 * The BUILT admin CLI (`node dist/src/cli/admin.js`, so run `npx tsc -p tsconfig.json` first) as a child process
 * against a real Redis: the run's redis-server from jest's globalSetup, or a private one when there is none.
 * Every id is unique to this file, so other test files may share the Redis.
 */

const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'admin.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let redisUrl: string;
let ownRedis: RedisServer | undefined;
let redis: Redis;
let registry: RedisRegistry;

function admin(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, REDIS_URL: redisUrl, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.stdin ?? '');
  });
}

/** Runs a command that must succeed and returns its --json output. */
async function adminJson<T = Record<string, unknown>>(args: string[], opts?: { stdin?: string }): Promise<T> {
  const run = await admin([...args, '--json'], opts);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

/** Every value held in Redis, whatever its type, as one string per key. */
async function everyValueInRedis(): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? JSON.stringify(await redis.hgetall(key))
            : type === 'list'
              ? JSON.stringify(await redis.lrange(key, 0, -1))
              : type === 'set'
                ? JSON.stringify(await redis.smembers(key))
                : type === 'zset'
                  ? JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES'))
                  : type === 'stream'
                    ? JSON.stringify(await redis.xrange(key, '-', '+'))
                    : '';
      values.set(key, value ?? '');
    }
  } while (cursor !== '0');
  return values;
}

const tag = randomBytes(4).toString('hex');
const alice = `alice-${tag}`;
const bob = `bob-${tag}`;
const acc = (n: string) => `cli-${tag}-${n}`;

beforeAll(async () => {
  if (!fs.existsSync(CLI)) throw new Error(`${path.relative(REPO_ROOT, CLI)} is missing: build first with npx tsc -p tsconfig.json`);
  if (process.env.TEST_RUN_DIR && process.env.REDIS_URL) {
    redisUrl = process.env.REDIS_URL;
  } else {
    ownRedis = await startRedis();
    redisUrl = ownRedis.url;
  }
  redis = new Redis(redisUrl);
  registry = new RedisRegistry(redis);

  const doc = {
    accounts: [
      { id: acc('a1'), owner: alice, platform: 'mt5', bridgeVersion: '2.0.0', bridgeToken: `brg_${tag}-alice-bridge-token-0001` },
      { id: acc('a2'), owner: alice, platform: 'ctrader', type: 'copy_master', risk: { maxVolume: 2, sizing: { mode: 'fixed', lots: 0.5 } } },
      { id: acc('b1'), owner: bob, platform: 'mt5', symbols: { suffix: '.m' } },
    ],
    secrets: [{ secret: `whsec_${tag}-imported-alice-secret`, owner: alice, accounts: [acc('a1'), acc('a2')] }],
    tokens: [{ token: `tok_${tag}-imported-token-0001`, accounts: [acc('a1'), acc('a2')] }],
  };
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'admin-cli-')), 'registry.json');
  fs.writeFileSync(file, JSON.stringify(doc));
  const run = await admin(['import', file]);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  if (run.code !== 0) throw new Error(`import failed: ${run.stderr}`);
  expect(run.stdout.trim()).toBe('imported 3 accounts, 1 secret, 1 token');
});

afterAll(async () => {
  redis?.disconnect();
  await ownRedis?.stop();
});

describe('admin CLI', () => {
  it('when a document is imported, then account show prints the accounts with their defaults and never a bridge token hash', async () => {
    const shown = await adminJson<{ account: Record<string, unknown>; bridgeToken: boolean; secrets: { id: string }[]; tokens: { id: string }[] }>([
      'account',
      'show',
      acc('a1'),
    ]);
    expect(shown.account).toMatchObject({
      id: acc('a1'),
      owner: alice,
      platform: 'mt5',
      type: 'standard',
      status: 'active',
      entitled: true,
      region: 'default',
      bridgeVersion: '2.0.0',
      venue: { stopLimit: true, modifyPending: true },
      risk: { blockedSymbols: [], sizing: { mode: 'signal' }, requireStopLoss: false, closeOnly: false },
      symbols: { aliases: {}, prefix: '', suffix: '' },
    });
    expect(shown.bridgeToken).toBe(true);
    expect(shown.secrets.map((s) => s.id)).toEqual([hashCredential(`whsec_${tag}-imported-alice-secret`).slice(0, 12)]);
    expect(shown.tokens.map((t) => t.id)).toEqual([hashCredential(`tok_${tag}-imported-token-0001`).slice(0, 12)]);

    const human = await admin(['account', 'show', acc('a2')]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('type: copy_master');
    expect(human.stdout).toContain('"maxVolume":2');
    expect(human.stdout).toContain('bridgeToken: none');

    const bridgeHash = hashCredential(`brg_${tag}-alice-bridge-token-0001`);
    for (const args of [
      ['account', 'show', acc('a1')],
      ['account', 'show', acc('a1'), '--json'],
      ['account', 'list', '--json'],
    ]) {
      const run = await admin(args);
      expect(run.stdout).not.toContain(bridgeHash);
      expect(run.stdout).not.toContain(bridgeHash.slice(0, 12));
    }
    expect((await registry.authenticateBridge(`brg_${tag}-alice-bridge-token-0001`))?.id).toBe(acc('a1'));

    const list = await adminJson<{ id: string }[]>(['account', 'list']);
    expect(list.map((a) => a.id)).toEqual(expect.arrayContaining([acc('a1'), acc('a2'), acc('b1')]));
  });

  it('when a secret is created, then it is printed once, authenticates, and Redis holds only its SHA-256', async () => {
    const run = await admin(['secret', 'create', '--owner', alice, '--accounts', `${acc('a1')},${acc('a2')}`]);
    expect(run.code).toBe(0);
    const secret = run.stdout.split('\n').find((l) => l.startsWith('whsec_'));
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const hash = hashCredential(secret!);
    expect(run.stdout).toContain(`created secret ${hash.slice(0, 12)}`);

    expect(await registry.authenticateSecret(secret!)).toEqual({ hash, owner: alice, accounts: [acc('a1'), acc('a2')] });

    const values = await everyValueInRedis();
    expect(values.get(`es:secret:${hash}`)).toContain(hash);
    for (const [key, value] of values) {
      expect({ key, hasSecret: key.includes(secret!) || value.includes(secret!) }).toEqual({ key, hasSecret: false });
    }

    const listed = await adminJson<{ id: string; owner: string }[]>(['secret', 'list', '--owner', alice]);
    expect(listed.map((s) => s.id)).toContain(hash.slice(0, 12));
    expect(JSON.stringify(listed)).not.toContain(secret!);
  });

  it('when a secret is rotated, then the old one stops authenticating and the new one has the same owner and accounts', async () => {
    const created = await adminJson<{ id: string; secret: string }>(['secret', 'create', '--owner', alice, '--accounts', acc('a1')]);
    const rotated = await adminJson<{ id: string; secret: string; owner: string; accounts: string[]; replaced: string }>([
      'secret',
      'rotate',
      '--id',
      created.id,
    ]);
    expect(rotated).toMatchObject({ owner: alice, accounts: [acc('a1')], replaced: created.id });
    expect(rotated.secret).not.toBe(created.secret);
    expect(await registry.authenticateSecret(created.secret)).toBeNull();
    expect(await registry.authenticateSecret(rotated.secret)).toMatchObject({ owner: alice, accounts: [acc('a1')] });

    // Rotating by the secret itself, read from stdin so it stays out of the process list.
    const again = await adminJson<{ secret: string }>(['secret', 'rotate', '--secret', '-'], { stdin: `${rotated.secret}\n` });
    expect(await registry.authenticateSecret(rotated.secret)).toBeNull();

    const revoked = await admin(['secret', 'revoke', '--secret', '-'], { stdin: again.secret });
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).not.toContain(again.secret);
    expect(await registry.authenticateSecret(again.secret)).toBeNull();

    const gone = await admin(['secret', 'rotate', '--id', created.id]);
    expect(gone).toMatchObject({ code: 1, stderr: `error: no secret with id ${created.id}\n` });
  });

  it("when a secret would link another owner's account, then it is refused with exit 1 and nothing is stored", async () => {
    // Other test files write secrets to the same Redis at the same time: count only this owner's.
    const alicesSecrets = async () => (await registry.findSecretsByHashPrefix('')).filter((s) => s.owner === alice).length;
    const before = await alicesSecrets();
    const run = await admin(['secret', 'create', '--owner', alice, '--accounts', `${acc('a1')},${acc('b1')}`]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`error: account ${acc('b1')} belongs to another owner: a secret of ${alice} may link only ${alice}'s accounts\n`);
    expect(await alicesSecrets()).toBe(before);

    const unknown = await admin(['secret', 'create', '--owner', alice, '--accounts', acc('nope')]);
    expect(unknown).toMatchObject({ code: 1, stderr: `error: unknown account ${acc('nope')}\n` });

    // The same rule through an import document: refused whole.
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'admin-cli-')), 'cross.json');
    fs.writeFileSync(file, JSON.stringify({ secrets: [{ secret: `whsec_${tag}-cross-owner-secret`, owner: bob, accounts: [acc('a1')] }] }));
    const imported = await admin(['import', file]);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    expect(imported.code).toBe(1);
    expect(imported.stderr).toMatch(new RegExp(`links account ${acc('a1')} of another owner; nothing was imported\\n$`));
    expect(await registry.authenticateSecret(`whsec_${tag}-cross-owner-secret`)).toBeNull();
  });

  it('when a token is suspended and unsuspended, then its grant carries the suspension and then none', async () => {
    const created = await adminJson<{ id: string; token: string; accounts: string[]; suspendedUntil: null }>([
      'token',
      'create',
      '--accounts',
      `${acc('a1')},${acc('a2')}`,
    ]);
    expect(created.token).toMatch(/^tok_[A-Za-z0-9_-]{43}$/);
    expect(await registry.authenticateToken(created.token)).toEqual({
      hash: hashCredential(created.token),
      owner: alice,
      accounts: [acc('a1'), acc('a2')],
      suspendedUntil: null,
    });

    const until = '2099-01-31T18:00:00Z';
    const suspended = await admin(['token', 'suspend', '--id', created.id, '--until', until]);
    expect(suspended).toMatchObject({ code: 0, stdout: `suspended token ${created.id} until ${until}\n` });
    expect((await registry.authenticateToken(created.token))?.suspendedUntil).toBe(until);

    await adminJson(['token', 'unsuspend', '--id', created.id]);
    expect((await registry.authenticateToken(created.token))?.suspendedUntil).toBeNull();

    const past = await admin(['token', 'suspend', '--id', created.id, '--until', '2001-01-01T00:00:00Z']);
    expect(past).toMatchObject({ code: 1, stderr: 'error: --until 2001-01-01T00:00:00Z is not in the future\n' });

    const later = await adminJson<{ token: string; suspendedUntil: string }>(['token', 'create', '--accounts', acc('a2'), '--suspended-until', until]);
    expect((await registry.authenticateToken(later.token))?.suspendedUntil).toBe(until);

    await adminJson(['token', 'revoke', '--id', created.id]);
    expect(await registry.authenticateToken(created.token)).toBeNull();
  });

  it('when an account is locked, unlocked and given new risk settings, then the registry holds each change', async () => {
    expect((await admin(['account', 'lock', acc('b1')])).stdout).toBe(`account ${acc('b1')} is locked\n`);
    expect((await registry.getAccount(acc('b1')))?.status).toBe('locked');
    expect((await adminJson<{ account: { status: string } }>(['account', 'show', acc('b1')])).account.status).toBe('locked');

    await adminJson(['account', 'unlock', acc('b1')]);
    expect((await registry.getAccount(acc('b1')))?.status).toBe('active');

    await adminJson(['account', 'risk', acc('b1'), '--set', '{"requireStopLoss":true,"blockedSymbols":["BTCUSD"]}']);
    const account = await registry.getAccount(acc('b1'));
    expect(account?.risk).toEqual({ blockedSymbols: ['BTCUSD'], sizing: { mode: 'signal' }, requireStopLoss: true, closeOnly: false });
    expect(account?.symbols.suffix).toBe('.m'); // untouched
  });

  it('when account set creates an account with a new bridge token, then the token authenticates the bridge and is stored hashed', async () => {
    const created = await adminJson<{ created: boolean; bridgeToken: string; account: { region: string } }>([
      'account',
      'set',
      acc('c1'),
      '--owner',
      bob,
      '--platform',
      'ctrader',
      '--region',
      'eu',
      '--entitled',
      'false',
      '--new-bridge-token',
    ]);
    expect(created).toMatchObject({ created: true, account: { region: 'eu' } });
    expect(created.bridgeToken).toMatch(/^brg_/);
    expect(await registry.authenticateBridge(created.bridgeToken)).toMatchObject({ id: acc('c1'), owner: bob, entitled: false });

    const updated = await adminJson<{ created: boolean; account: Record<string, unknown> }>(['account', 'set', acc('c1'), '--bridge-version', '1.1.0']);
    expect(updated).toMatchObject({ created: false, account: { bridgeVersion: '1.1.0', region: 'eu', owner: bob } });
    expect(updated).not.toHaveProperty('bridgeToken');
    expect(await registry.authenticateBridge(created.bridgeToken)).toMatchObject({ bridgeVersion: '1.1.0' });

    for (const value of (await everyValueInRedis()).values()) expect(value.includes(created.bridgeToken)).toBe(false);
  });

  it.each([
    [['frobnicate'], /^error: unknown verb "frobnicate"/],
    [['secret'], /^error: secret needs one of: create, rotate, revoke, list$/],
    [['secret', 'create', '--accounts', 'x'], /^error: --owner is required$/],
    [['secret', 'create', '--owner', 'u', '--accounts', 'x', '--colour', 'red'], /^error: Unknown option '--colour'\.$/],
    [['secret', 'revoke', '--id', 'xyz'], /^error: --id must be 8 to 64 hex characters/],
    [['secret', 'revoke'], /^error: give exactly one of --id HASHPREFIX and --secret VALUE$/],
    [['token', 'suspend', '--id', 'abcdef12', '--until', 'tomorrow'], /^error: --until must be an ISO 8601 date-time/],
    [['account', 'set', 'new-one', '--platform', 'mt5'], /^error: account new-one does not exist: a new account needs --owner and --platform$/],
    [['account', 'set', 'x', '--owner', 'u', '--platform', 'mt4'], /^error: --platform: Invalid option: expected one of "mt5"\|"ctrader"$/],
    [['account', 'set', 'x', '--owner', 'u', '--platform', 'mt5', '--entitled', 'yes'], /^error: --entitled must be true or false/],
    [['account', 'risk', 'x', '--set', '{"sizing":{"mode":"fixed","lots":500}}'], /^error: --set sizing\.lots: Too big: expected number to be <=100$/],
    [['account', 'risk', 'x', '--set', '{not json'], /^error: --set is not valid JSON: /],
    [['account', 'show', 'no/such'], /^error: account id "no\/such" must be 1 to 64 letters, digits or \._-$/],
    [['account', 'show', 'no-such-account-anywhere'], /^error: no account no-such-account-anywhere$/],
    [['import', '/no/such/file.json'], /^error: cannot read \/no\/such\/file\.json: no such file$/],
  ])('when the command is invalid (%j), then it exits 1 with one clear line on stderr', async (args, message) => {
    const run = await admin(args);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.endsWith('\n')).toBe(true);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr.trimEnd()).toMatch(message);
  });

  it('when an import document is invalid, then the issues are summarised as path: message and nothing is imported', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'admin-cli-')), 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ accounts: [{ id: acc('bad'), owner: alice, platform: 'mt5', status: 'frozen' }], extra: 1 }));
    const run = await admin(['import', file]);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: ${file}: accounts.0.status: Invalid option: expected one of "active"|"locked"; (document): Unrecognized key: "extra"\n`);
    expect(await registry.getAccount(acc('bad'))).toBeNull();
  });

  it('when Redis cannot be reached, then it exits 2 and names Redis without its password', async () => {
    const run = await admin(['account', 'list'], { env: { REDIS_URL: 'redis://:hunter2@127.0.0.1:1' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1: .+\n$/);
    expect(run.stderr).not.toContain('hunter2');
  });
});
