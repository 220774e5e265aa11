import { envSchema, loadConfig } from '../../src/config';
import { REMOVED_SETTINGS } from '../../src/config-removed';

describe('loadConfig: fewer settings', () => {
  test('when the settings are counted, then there are 36 an operator decides, at most 40', () => {
    const count = Object.keys(envSchema.shape).length;
    expect(count).toBe(36);
    expect(count).toBeLessThanOrEqual(40);
  });

  test('when a removed setting is still set, then start-up refuses it by name with its fixed value or its replacement', () => {
    expect(() => loadConfig({ BODY_READ_TIMEOUT_MS: '3000' })).toThrow(/^Invalid configuration:\nBODY_READ_TIMEOUT_MS: no longer a setting .*fixed at 5000/);
    expect(() => loadConfig({ TEMPORAL_TLS_CA_FILE: '/etc/ca.pem' })).toThrow(/TEMPORAL_TLS_CA_FILE: .*TEMPORAL_REGIONS/);
    expect(() => loadConfig({ ROUTE_LIMIT_MAX: '5' })).toThrow(/ROUTE_LIMIT_MAX: .*RATE_LIMIT_SCALE/);
    // Every name at once, one line each; an empty variable counts as unset, as everywhere.
    expect(() => loadConfig({ POLL_IP_MAX: '1', SESSION_TTL_SECONDS: '60' })).toThrow(/POLL_IP_MAX: .*\nSESSION_TTL_SECONDS: .*fixed at 43200/);
    expect(() => loadConfig({ BODY_READ_TIMEOUT_MS: '' })).not.toThrow();
  });

  test('when a removed setting is refused, then it is no longer in the schema, and no kept one is refused', () => {
    const kept = Object.keys(envSchema.shape);
    expect(Object.keys(REMOVED_SETTINGS).filter((name) => kept.includes(name))).toEqual([]);
  });

  test('when cTrader is connected, then the redirect URI is the dashboard callback under PUBLIC_URL', () => {
    const c = loadConfig({
      PUBLIC_URL: 'https://signals.example.com/',
      CTRADER_OAUTH_CLIENT_ID: 'app',
      CTRADER_OAUTH_CLIENT_SECRET_FILE: '/run/secret',
      CTRADER_TOKENS_KEY_FILE: '/run/key',
    });
    expect(c.ctraderOAuth?.redirectUrl).toBe('https://signals.example.com/dashboard/ctrader/callback');
    expect(() => loadConfig({ CTRADER_OAUTH_CLIENT_ID: 'app', CTRADER_TOKENS_KEY_FILE: '/run/key' })).toThrow(/CTRADER_OAUTH_CLIENT_SECRET_FILE: required/);
  });
});
