import { loadConfig } from '../../src/config';

/**
 * The environment is the only input of loadConfig; every test passes its own env object (never process.env, which the
 * jest global setup fills with the test infrastructure's coordinates).
 */

describe('loadConfig: spec defaults', () => {
  const config = loadConfig({});

  test('when nothing is set, then the body limit is 64 KB (65536 bytes, spec §8)', () => {
    expect(config.ingress.bodyLimitBytes).toBe(65536);
  });

  test('when nothing is set, then the idempotency replay window is 45 s (spec §5 rule 5, §8)', () => {
    expect(config.ingress.idempotencyWindowMs).toBe(45000);
  });

  test('when nothing is set, then X-Idempotency-Key may be at most 128 characters (spec §4.1, §8)', () => {
    expect(config.ingress.idempotencyKeyMaxLength).toBe(128);
  });

  test('when nothing is set, then the service listens on 127.0.0.1:8080 and its public URL is derived from them', () => {
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8080);
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
  });

  test('when nothing is set, then Redis and Temporal are on loopback defaults with one region "default"', () => {
    expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', commandTimeoutMs: 2000, replicaAck: { min: 0, timeoutMs: 200 }, redeliverAfterMs: 15_000 });
    expect(config.temporal.regions).toEqual([{ name: 'default', address: '127.0.0.1:7233', namespace: 'default' }]);
    expect(config.temporal.taskQueue).toBe('external-signals');
    expect(config.temporal.startTimeoutMs).toBe(1500);
    expect(config.temporal.connectTimeoutMs).toBe(1000);
    expect(config.temporal.workflowBundlePath).toBeUndefined();
  });

  test('when nothing is set, then the limiter defaults apply', () => {
    expect(config.limits).toEqual({
      webhookPreAuthIp: { max: 300, windowMs: 60_000 },
      route: { max: 120, windowMs: 60_000 },
      fairnessAccount: { max: 60, windowMs: 10_000 },
      fairnessBroadcast: { max: 60, windowMs: 10_000 },
      pollIp: { max: 600, windowMs: 60_000 },
      pollAccount: { max: 300, windowMs: 60_000 },
      failClosedRetryAfterSeconds: 5,
      keyPrefix: 'es:rl:',
    });
  });

  test('when nothing is set, then the remaining defaults are the documented ones', () => {
    expect(config.logLevel).toBe('info');
    expect(config.ingress.maxInFlight).toBe(2048);
    expect(config.ingress.bodyReadTimeoutMs).toBe(5_000);
    expect(config.ingress.maxConnectionsPerIp).toBe(2048);
    expect(config.ingress.maxOverCapConnections).toBe(4096);
    expect(config.door).toEqual({ maxPendingStarts: 20_000, maxPendingStartAgeMs: 300_000, redisMemoryFullFraction: 0.9, minReplicas: 0, refreshMs: 250 });
    expect(config.bridge).toEqual({
      maxWaitMs: 25_000,
      limit: { max: 600, windowMs: 60_000 },
      defaultMaxSignalAgeMs: 30_000,
      defaultCommandTtlMs: 300_000,
      figuresMaxAgeMs: 60_000,
    });
  });

  test('when the old admission settings are set, then the config is refused by name (a slow Temporal no longer shuts the door)', () => {
    for (const name of ['ADMISSION_SUPERVISION_LAG_MS', 'ADMISSION_MAX_LATE', 'ADMISSION_LOST_START_AFTER_MS', 'ADMISSION_REFRESH_MS'])
      expect(() => loadConfig({ [name]: '1000' })).toThrow(new RegExp(`${name}: no longer a setting`));
  });

  test('when REDIS_MIN_REPLICAS_ACK is set, then the door asks for as many connected replicas', () => {
    expect(loadConfig({ REDIS_MIN_REPLICAS_ACK: '2' }).door.minReplicas).toBe(2);
  });

  test('when nothing is set, then callbacks have no key, https only, no allowed private host, and their documented bounds', () => {
    expect(config.callbacks).toEqual({
      sealingKeyFile: undefined,
      guard: { allowedOrigins: [], allowHttp: false, maxUrlLength: 512 },
      maxEndpointsPerOwner: 5,
      post: { timeoutMs: 10_000, maxResponseBytes: 4096 },
      attemptsKeep: { count: 200, seconds: 604_800 },
    });
  });

  test('when CALLBACK_ALLOWED_ORIGINS lists origins, then each is read as scheme, host and port (the default port when none); anything but an origin is refused', () => {
    const read = (env: NodeJS.ProcessEnv) => loadConfig(env).callbacks.guard.allowedOrigins;
    expect(read({ CALLBACK_ALLOWED_ORIGINS: ' http://127.0.0.1:8080, receiver.internal ,::1' })).toEqual([
      { scheme: 'http', host: '127.0.0.1', port: 8080 },
      { scheme: 'https', host: 'receiver.internal', port: 443 },
      { scheme: 'https', host: '::1', port: 443 },
    ]);
    expect(() => loadConfig({ CALLBACK_ALLOWED_ORIGINS: 'http://x/hooks' })).toThrow(/CALLBACK_ALLOWED_ORIGINS.*origin only/);
    // The old name is no longer read: set, it is refused with the new one's name.
    expect(() => loadConfig({ CALLBACK_ALLOWED_HOSTS: '127.0.0.1' })).toThrow(/CALLBACK_ALLOWED_HOSTS: no longer read: its name is CALLBACK_ALLOWED_ORIGINS/);
  });

  test('when nothing is set, then no secret, token or password has a default anywhere in the config', () => {
    const keys: string[] = [];
    const walk = (value: unknown, path: string) => {
      if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
      } else if (value !== undefined) keys.push(path);
    };
    walk(config, '');
    // A secret's file (OWNER_SECRETS_KEY_FILE) is a setting with no default at all: unset, it is undefined.
    expect(config.owners.secretsKeyFile).toBeUndefined();
    expect(keys.filter((k) => /secret|token|password|passwd|credential|apikey|api_key/i.test(k))).toEqual([]);
    // No credentials embedded in the default connection URL either.
    expect(config.redis.url).not.toMatch(/@/);
  });

  test('when secret-looking variables are set, then they are ignored and never appear in the config', () => {
    const c = loadConfig({ WEBHOOK_SECRET: 'whsec_x', API_TOKEN: 'tok_x', BRIDGE_TOKEN: 'brg_x' });
    expect(JSON.stringify(c)).not.toMatch(/whsec_x|tok_x|brg_x/);
  });
});

describe('loadConfig: overrides', () => {
  test('when nothing is set, then the spec numbers are those of the spec: 64 KB, 45 s, 128 characters', () => {
    const c = loadConfig({});
    expect(c.ingress).toMatchObject({ bodyLimitBytes: 65_536, idempotencyWindowMs: 45_000, idempotencyKeyMaxLength: 128 });
  });

  test('when host, port and public URL are set, then they are used as given', () => {
    const c = loadConfig({ HOST: '0.0.0.0', PORT: '9090', PUBLIC_URL: 'https://signals.example.com' });
    expect(c.host).toBe('0.0.0.0');
    expect(c.port).toBe(9090);
    expect(c.publicUrl).toBe('https://signals.example.com');
  });

  test('when host and port are set but no public URL, then the public URL follows them', () => {
    expect(loadConfig({ HOST: '10.0.0.5', PORT: '3000' }).publicUrl).toBe('http://10.0.0.5:3000');
  });

  test('when limiter variables are set, then the per-address pre-auth cap takes them and RATE_LIMIT_SCALE multiplies the per-caller limits, never their windows', () => {
    const c = loadConfig({ WEBHOOK_PREAUTH_IP_MAX: '4', WEBHOOK_PREAUTH_IP_WINDOW_MS: '500', RATE_LIMIT_SCALE: '3', RATE_LIMIT_KEY_PREFIX: 'test:run1:' });
    expect(c.limits).toEqual({
      webhookPreAuthIp: { max: 4, windowMs: 500 },
      route: { max: 360, windowMs: 60_000 },
      fairnessAccount: { max: 180, windowMs: 10_000 },
      fairnessBroadcast: { max: 180, windowMs: 10_000 },
      pollIp: { max: 1800, windowMs: 60_000 },
      pollAccount: { max: 900, windowMs: 60_000 },
      failClosedRetryAfterSeconds: 5,
      keyPrefix: 'test:run1:',
    });
    expect(c.bridge.limit).toEqual({ max: 1800, windowMs: 60_000 });
    // A brute-force bound, not a load one: the scale leaves the sign-in cap alone.
    expect(c.owners.signInIp).toEqual({ max: 20, windowMs: 900_000 });
    expect(() => loadConfig({ RATE_LIMIT_SCALE: '0' })).toThrow(/RATE_LIMIT_SCALE/);
  });

  test('when Redis, Temporal, bridge and log variables are set, then they are used', () => {
    const c = loadConfig({
      REDIS_URL: 'redis://cache:6380',
      REDIS_COMMAND_TIMEOUT_MS: '250',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'prod',
      TEMPORAL_TASK_QUEUE: 'q',
      TEMPORAL_START_TIMEOUT_MS: '2500',
      MAX_IN_FLIGHT: '64',
      MAX_CONNECTIONS_PER_IP: '0',
      BRIDGE_MAX_WAIT_MS: '0',
      LOG_LEVEL: 'debug',
    });
    expect(c.redis).toEqual({ url: 'redis://cache:6380', commandTimeoutMs: 250, replicaAck: { min: 0, timeoutMs: 200 }, redeliverAfterMs: 15_000 });
    expect(c.temporal).toEqual({
      regions: [{ name: 'default', address: 'temporal:7233', namespace: 'prod' }],
      taskQueue: 'q',
      startTimeoutMs: 2500,
      connectTimeoutMs: 1000,
      workflowBundlePath: undefined,
    });
    expect(c.ingress.maxInFlight).toBe(64);
    expect(c.ingress.bodyReadTimeoutMs).toBe(5000);
    expect(c.ingress.maxConnectionsPerIp).toBe(0);
    expect(c.bridge).toEqual({
      maxWaitMs: 0,
      limit: { max: 600, windowMs: 60_000 },
      defaultMaxSignalAgeMs: 30_000,
      defaultCommandTtlMs: 300_000,
      figuresMaxAgeMs: 60_000,
    });
    expect(c.logLevel).toBe('debug');
  });
});

describe('loadConfig: invalid values', () => {
  test.each([
    ['PORT', 'eighty'],
    ['PORT', '80.5'],
    ['PORT', '-1'],
    ['WEBHOOK_PREAUTH_IP_MAX', '0'],
    ['WEBHOOK_PREAUTH_IP_WINDOW_MS', 'a minute'],
    ['MAX_IN_FLIGHT', '0'],
    ['MAX_CONNECTIONS_PER_IP', '-1'],
    ['REDIS_COMMAND_TIMEOUT_MS', '0'],
    ['TEMPORAL_START_TIMEOUT_MS', '0'],
    ['BRIDGE_MAX_WAIT_MS', '-5'],
    ['LOG_LEVEL', 'verbose'],
    ['RATE_LIMIT_SCALE', 'lots'],
    ['RATE_LIMIT_KEY_PREFIX', 'has space'],
    ['RATE_LIMIT_KEY_PREFIX', 'x'.repeat(33)],
  ])('when %s is %p, then loading throws an "Invalid configuration" error naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(/^Invalid configuration:/);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`\\b${name}\\b`));
  });

  // Regression (src/config.ts int(), fixed): z.coerce.number() turns an empty or blank variable into 0, so `PORT=` silently listens on
  // a random ephemeral port and `BRIDGE_MAX_WAIT_MS=` silently disables long-polling, instead of using the default or
  // refusing the value.
  test.each(['PORT', 'BRIDGE_MAX_WAIT_MS'])('when %s is set but empty, then it is refused or treated as unset, never read as 0', (name) => {
    for (const value of ['', ' ']) {
      let outcome: string;
      try {
        const c = loadConfig({ [name]: value });
        outcome = String(name === 'PORT' ? c.port : c.bridge.maxWaitMs);
      } catch (e) {
        outcome = (e as Error).message.startsWith('Invalid configuration:') ? 'refused' : `threw: ${(e as Error).message}`;
      }
      expect(`${name}=${JSON.stringify(value)} -> ${outcome}`).toBe(
        `${name}=${JSON.stringify(value)} -> ${outcome === 'refused' ? 'refused' : name === 'PORT' ? '8080' : '25000'}`,
      );
    }
  });

  // Regression (src/config.ts PORT, fixed): no upper bound, so PORT=99999 passes loadConfig and only fails later inside listen()
  // with a Node RangeError rather than the "Invalid configuration" error.
  test('when PORT is above 65535, then loading throws an "Invalid configuration" error naming PORT', () => {
    expect(() => loadConfig({ PORT: '99999' })).toThrow(/^Invalid configuration:[\s\S]*PORT/);
  });

  test('when several variables are invalid, then the error lists each of them', () => {
    let message = '';
    try {
      loadConfig({ PORT: 'x', LOG_LEVEL: 'loud' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/PORT/);
    expect(message).toMatch(/LOG_LEVEL/);
  });
});

describe('loadConfig: TEMPORAL_REGIONS', () => {
  test('when TEMPORAL_REGIONS is a JSON array of regions, then each region is used and TEMPORAL_ADDRESS is not', () => {
    const regions = [
      { name: 'eu', address: 'temporal-eu:7233', namespace: 'signals-eu' },
      { name: 'us-east_1', address: 'temporal-us:7233', namespace: 'signals-us' },
    ];
    const c = loadConfig({ TEMPORAL_REGIONS: JSON.stringify(regions), TEMPORAL_ADDRESS: 'ignored:7233' });
    expect(c.temporal.regions).toEqual(regions);
  });

  test.each([
    ['an empty array', '[]'],
    ['an object instead of an array', '{"name":"eu","address":"a:7233","namespace":"n"}'],
    ['a region without namespace', '[{"name":"eu","address":"a:7233"}]'],
    ['a region with an empty address', '[{"name":"eu","address":"","namespace":"n"}]'],
    ['a region name with upper case', '[{"name":"EU","address":"a:7233","namespace":"n"}]'],
    ['a region name with a space', '[{"name":"eu west","address":"a:7233","namespace":"n"}]'],
    ['a number', '42'],
  ])('when TEMPORAL_REGIONS is %s, then loading throws', (_what, value) => {
    expect(() => loadConfig({ TEMPORAL_REGIONS: value })).toThrow();
  });

  test('when TEMPORAL_REGIONS is not JSON, then loading throws', () => {
    expect(() => loadConfig({ TEMPORAL_REGIONS: '[eu, us]' })).toThrow();
  });

  // Regression (src/config.ts loadConfig, fixed): TEMPORAL_REGIONS is parsed outside envSchema, so a bad value throws a bare
  // SyntaxError ("Unexpected token ...") or a raw ZodError instead of the "Invalid configuration" error every other
  // variable gets, and the message never says which variable is wrong.
  test('when TEMPORAL_REGIONS is not JSON, then the error is an "Invalid configuration" error naming TEMPORAL_REGIONS', () => {
    expect(() => loadConfig({ TEMPORAL_REGIONS: '[eu, us]' })).toThrow(/^Invalid configuration:[\s\S]*TEMPORAL_REGIONS/);
  });

  test('when TEMPORAL_REGIONS has the wrong shape, then the error is an "Invalid configuration" error naming TEMPORAL_REGIONS', () => {
    expect(() => loadConfig({ TEMPORAL_REGIONS: '[{"name":"eu"}]' })).toThrow(/^Invalid configuration:[\s\S]*TEMPORAL_REGIONS/);
  });
});

describe('loadConfig: deployment settings (admin listener, TRUST_PROXY)', () => {
  test('when nothing is set, then the admin listener is on loopback port 9465 and no proxy is trusted', () => {
    const c = loadConfig({});
    expect(c.admin).toEqual({ host: '127.0.0.1', port: 9465 });
    expect(c.trustProxy).toBe(false);
  });

  test('when ADMIN_HOST and ADMIN_PORT are set, then they are used; when ADMIN_PORT is off, then there is no admin listener', () => {
    expect(loadConfig({ ADMIN_HOST: '10.0.0.5', ADMIN_PORT: '9100' }).admin).toEqual({ host: '10.0.0.5', port: 9100 });
    expect(loadConfig({ ADMIN_PORT: 'off' }).admin).toBeUndefined();
  });

  test('when ADMIN_PORT equals PORT, then loading throws naming ADMIN_PORT', () => {
    expect(() => loadConfig({ PORT: '8080', ADMIN_PORT: '8080' })).toThrow(/^Invalid configuration:[\s\S]*ADMIN_PORT/);
  });

  test.each([
    ['', false],
    ['false', false],
    ['off', false],
    ['0', false],
    ['1', 1],
    ['2', 2],
    ['loopback', ['loopback']],
    ['10.0.0.1', ['10.0.0.1']],
    ['10.0.0.0/8, 192.168.1.10 ,::1,fd00::/8,uniquelocal', ['10.0.0.0/8', '192.168.1.10', '::1', 'fd00::/8', 'uniquelocal']],
  ])('when TRUST_PROXY is %p, then Express is given %p', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  test.each(['true', 'yes', '11', 'proxy.example.com', '10.0.0.0/33', '10.0.0.1/8/2', '300.1.1.1', '10.0.0.1,,10.0.0.2'])(
    'when TRUST_PROXY is %p, then loading throws an "Invalid configuration" error naming TRUST_PROXY',
    (value) => {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/^Invalid configuration:[\s\S]*TRUST_PROXY/);
    },
  );

  test.each([
    ['ADMIN_PORT', '70000'],
    ['ADMIN_PORT', 'admin'],
  ])('when %s is %p, then loading throws naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration:[\\s\\S]*${name}`));
  });
});

describe('loadConfig: Redis over TLS', () => {
  test("when REDIS_TLS_* files come with a rediss:// URL, then they are the connection's TLS settings", () => {
    const c = loadConfig({
      REDIS_URL: 'rediss://svc:pw@redis.internal:6380',
      REDIS_TLS_CA_FILE: '/etc/ca.pem',
      REDIS_TLS_CERT_FILE: '/etc/c.pem',
      REDIS_TLS_KEY_FILE: '/etc/k.pem',
    });
    expect(c.redis.tls).toEqual({ caFile: '/etc/ca.pem', certFile: '/etc/c.pem', keyFile: '/etc/k.pem' });
  });

  test('when no REDIS_TLS_* is set, then there are no TLS settings (a rediss:// URL alone uses the system CAs)', () => {
    expect(loadConfig({ REDIS_URL: 'rediss://redis.internal:6380' }).redis.tls).toBeUndefined();
  });

  test('when REDIS_TLS_* is set for a plain redis:// URL, then loading throws: TLS files would be silently unused', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_TLS_CA_FILE: '/etc/ca.pem' })).toThrow(
      /REDIS_TLS_\*: set for a REDIS_URL that is not rediss/,
    );
  });

  test('when a client certificate comes without its key (or the key without the certificate), then loading throws', () => {
    expect(() => loadConfig({ REDIS_URL: 'rediss://h:1', REDIS_TLS_CERT_FILE: '/etc/c.pem' })).toThrow(
      /REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE go together/,
    );
    expect(() => loadConfig({ REDIS_URL: 'rediss://h:1', REDIS_TLS_KEY_FILE: '/etc/k.pem' })).toThrow(/go together/);
  });
});
