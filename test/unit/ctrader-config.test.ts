import { loadConnectorConfig } from '../../src/ctrader/config';

/** The cTrader connector's own settings (src/ctrader/config.ts); every test passes its own env object. */

describe('loadConnectorConfig: the cTrader connector', () => {
  const KEY = Buffer.alloc(32, 7).toString('base64');

  test('when only the credentials key is set, then the documented defaults apply (Open API JSON on port 5036, 50 requests/s)', () => {
    expect(loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: KEY })).toEqual({
      linked: undefined,
      application: undefined,
      ingressUrl: 'http://127.0.0.1:8080',
      credentialsKey: KEY,
      credentialsFile: 'ctrader/credentials.enc',
      stateDir: 'ctrader/state',
      urls: { demo: 'wss://demo.ctraderapi.com:5036', live: 'wss://live.ctraderapi.com:5036' },
      requestsPerSecond: 50,
      heartbeatMs: 10_000,
      requestTimeoutMs: 15_000,
      refreshAheadMs: 3_600_000,
      waitMs: 20_000,
      figuresHeartbeatMs: 30_000,
    });
  });

  test('when the credentials key is empty, then loading throws naming it (there is no default key)', () => {
    expect(() => loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: '' })).toThrow(/^Invalid configuration:[\s\S]*CTRADER_CREDENTIALS_KEY/);
  });

  test('when linked accounts are half configured, then loading throws naming both settings', () => {
    expect(() => loadConnectorConfig({ REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(/REDIS_URL and CTRADER_TOKENS_KEY_FILE/);
    expect(() => loadConnectorConfig({ CTRADER_OAUTH_CLIENT_ID: 'app' })).toThrow(/CTRADER_OAUTH_CLIENT_SECRET_FILE/);
    const linked = loadConnectorConfig({
      REDIS_URL: 'redis://127.0.0.1:6379',
      CTRADER_TOKENS_KEY_FILE: '/k',
      CTRADER_OAUTH_CLIENT_ID: 'app',
      CTRADER_OAUTH_CLIENT_SECRET: 's3',
    });
    expect(linked.linked).toEqual({ redisUrl: 'redis://127.0.0.1:6379', tokensKeyFile: '/k', reloadMs: 30_000 });
    expect(linked.application?.clientSecret()).toBe('s3');
    // The secret is read when asked for: the config object itself never holds it.
    expect(JSON.stringify(linked)).not.toContain('s3');
  });

  test('when more than 50 requests per second are asked for, then loading throws (Open API allows 50 per connection)', () => {
    expect(() => loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: KEY, CTRADER_REQUESTS_PER_SECOND: '51' })).toThrow(/CTRADER_REQUESTS_PER_SECOND/);
    expect(loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: KEY, CTRADER_REQUESTS_PER_SECOND: '20' }).requestsPerSecond).toBe(20);
  });

  test('when an endpoint is not a WebSocket URL, then loading throws naming it', () => {
    expect(() => loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: KEY, CTRADER_LIVE_URL: 'https://live.ctraderapi.com:5036' })).toThrow(/CTRADER_LIVE_URL/);
  });
});
