import { loadConfig } from '../../src/config';
import { temporalConnectionOptions } from '../../src/temporal/connection-options';

/** How a Temporal connection is secured: TLS, mTLS client certificates and API keys, from files named in the config. */
describe('Temporal connection security', () => {
  const files: Record<string, string> = {
    '/etc/es/ca.pem': 'CA PEM',
    '/etc/es/client.pem': 'CLIENT CERT PEM',
    '/etc/es/client.key': 'CLIENT KEY PEM',
    '/etc/es/cloud.key': 'tcld-api-key-value\n',
    '/etc/es/empty': '',
  };
  const read = (file: string): Buffer => {
    if (!(file in files)) throw Object.assign(new Error(`ENOENT: ${file}`), { code: 'ENOENT' });
    return Buffer.from(files[file]!);
  };
  /** The one region "default" as TEMPORAL_REGIONS gives it, secured by `security` (tls, apiKeyFile); none: the default. */
  const region = (security?: Record<string, unknown>) =>
    loadConfig(security ? { TEMPORAL_REGIONS: JSON.stringify([{ name: 'default', address: '127.0.0.1:7233', namespace: 'default', ...security }]) } : {})
      .temporal.regions[0]!;

  test('when nothing is set, then the connection is plain and carries no key', () => {
    expect(temporalConnectionOptions(region(), read)).toEqual({ address: '127.0.0.1:7233' });
  });

  test('when a region has tls: true, then the connection uses TLS with the system roots', () => {
    expect(temporalConnectionOptions(region({ tls: true }), read)).toEqual({ address: '127.0.0.1:7233', tls: true });
  });

  test('when a CA, a client certificate and a server name are given, then mTLS carries exactly those bytes', () => {
    const opts = temporalConnectionOptions(
      region({ tls: { caFile: '/etc/es/ca.pem', certFile: '/etc/es/client.pem', keyFile: '/etc/es/client.key', serverName: 'temporal.internal' } }),
      read,
    );
    expect(opts.tls).toEqual({
      serverNameOverride: 'temporal.internal',
      serverRootCACertificate: Buffer.from('CA PEM'),
      clientCertPair: { crt: Buffer.from('CLIENT CERT PEM'), key: Buffer.from('CLIENT KEY PEM') },
    });
  });

  test('when a Temporal Cloud API key file is given with TLS, then the key is read and trimmed', () => {
    expect(temporalConnectionOptions(region({ tls: true, apiKeyFile: '/etc/es/cloud.key' }), read)).toEqual({
      address: '127.0.0.1:7233',
      tls: true,
      apiKey: 'tcld-api-key-value',
    });
  });

  test('when an API key is configured without TLS, then the config is refused (a key never travels in clear)', () => {
    expect(() => loadConfig({ TEMPORAL_REGIONS: JSON.stringify([{ name: 'eu', address: 'eu:7233', namespace: 'x', apiKeyFile: '/k' }]) })).toThrow(
      /apiKeyFile/,
    );
  });

  test('when a client certificate comes without its key, then the config is refused', () => {
    expect(() => region({ tls: { certFile: '/etc/es/client.pem' } })).toThrow(/TEMPORAL_REGIONS\[0\]\.certFile: tls.certFile and tls.keyFile go together/);
  });

  test('when regions are configured, then each has its own security', () => {
    const regions = loadConfig({
      TEMPORAL_REGIONS: JSON.stringify([
        { name: 'eu', address: 'eu.tmprl.cloud:7233', namespace: 'es.abc12', tls: true, apiKeyFile: '/etc/es/cloud.key' },
        {
          name: 'us',
          address: '10.0.0.5:7233',
          namespace: 'default',
          tls: { caFile: '/etc/es/ca.pem', certFile: '/etc/es/client.pem', keyFile: '/etc/es/client.key' },
        },
        { name: 'lab', address: '127.0.0.1:7233', namespace: 'default' },
      ]),
    }).temporal.regions;
    expect(temporalConnectionOptions(regions[0]!, read)).toMatchObject({ tls: true, apiKey: 'tcld-api-key-value' });
    expect(temporalConnectionOptions(regions[1]!, read).tls).toMatchObject({ clientCertPair: { crt: Buffer.from('CLIENT CERT PEM') } });
    expect(temporalConnectionOptions(regions[2]!, read)).toEqual({ address: '127.0.0.1:7233' });
  });

  test('when a file is missing or empty, then start-up fails naming the setting and the path, never a secret', () => {
    expect(() => temporalConnectionOptions(region({ tls: { caFile: '/etc/es/nope.pem' } }), read)).toThrow(
      'region default: the TLS CA file /etc/es/nope.pem cannot be read (ENOENT)',
    );
    expect(() => temporalConnectionOptions(region({ tls: true, apiKeyFile: '/etc/es/empty' }), read)).toThrow(/API key file \/etc\/es\/empty cannot be read/);
    try {
      temporalConnectionOptions(region({ tls: { caFile: '/etc/es/ca.pem', certFile: '/etc/es/client.pem', keyFile: '/etc/es/missing.key' } }), read);
      throw new Error('expected a failure');
    } catch (err) {
      expect((err as Error).message).toMatch(/TLS client key/);
      expect((err as Error).message).not.toMatch(/PEM/);
    }
  });
});
