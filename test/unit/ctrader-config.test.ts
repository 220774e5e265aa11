import { loadConnectorConfig } from '../../src/ctrader/config';

/** The cTrader connector's own settings (src/ctrader/config.ts); every test passes its own env object. */

describe('loadConnectorConfig: the cTrader connector', () => {
  const KEY = Buffer.alloc(32, 7).toString('base64');

  test('when only the credentials key is set, then the documented defaults apply (Open API JSON on port 5036, 50 requests/s)', () => {
    expect(loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: KEY })).toEqual({
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

  test('when the credentials key is missing, then loading throws naming it (there is no default key)', () => {
    expect(() => loadConnectorConfig({})).toThrow(/^Invalid configuration:[\s\S]*CTRADER_CREDENTIALS_KEY/);
  });

  test('when more than 50 requests per second are asked for, then loading throws (Open API allows 50 per connection)', () => {
    expect(() => loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: KEY, CTRADER_REQUESTS_PER_SECOND: '51' })).toThrow(/CTRADER_REQUESTS_PER_SECOND/);
    expect(loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: KEY, CTRADER_REQUESTS_PER_SECOND: '20' }).requestsPerSecond).toBe(20);
  });

  test('when an endpoint is not a WebSocket URL, then loading throws naming it', () => {
    expect(() => loadConnectorConfig({ CTRADER_CREDENTIALS_KEY: KEY, CTRADER_LIVE_URL: 'https://live.ctraderapi.com:5036' })).toThrow(/CTRADER_LIVE_URL/);
  });
});
