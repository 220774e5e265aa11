import { sentinelOptions } from '../../src/redis';

/** REDIS_URL forms: plain, ACL user, TLS (ioredis reads those itself) and Sentinel (read here). */
describe('REDIS_URL', () => {
  test('when the URL is a plain, ACL or TLS URL, then it is left to ioredis', () => {
    expect(sentinelOptions('redis://127.0.0.1:6379')).toBeUndefined();
    expect(sentinelOptions('redis://es-ingress:s3cret@redis.internal:6379/0')).toBeUndefined();
    expect(sentinelOptions('rediss://es-ingress:s3cret@redis.internal:6380')).toBeUndefined();
  });

  test('when the URL names sentinels and a master, then ioredis gets the sentinels, the master and the ACL user', () => {
    expect(sentinelOptions('redis+sentinel://es:p%40ss@10.0.0.1:26379,10.0.0.2:26380/es-master/2')).toMatchObject({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
      ],
      name: 'es-master',
      username: 'es',
      password: 'p@ss',
      db: 2,
    });
    const tls = sentinelOptions('rediss+sentinel://127.0.0.1:26379/m');
    expect(tls).toMatchObject({ sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'm', tls: {}, enableTLSForSentinelMode: true });
    expect(tls).not.toHaveProperty('password');
  });

  test('when the old master refuses a write after a failover, then the connection reconnects without sending it again', () => {
    const reconnect = sentinelOptions('redis+sentinel://127.0.0.1:26379/m')!.reconnectOnError!;
    expect(reconnect(new Error("READONLY You can't write against a read only replica."))).toBe(1);
    expect(reconnect(new Error('ERR something else'))).toBe(false);
  });

  test('when a Sentinel URL is malformed, then the config is refused with the expected form', () => {
    expect(() => sentinelOptions('redis+sentinel://127.0.0.1:26379')).toThrow(/redis\+sentinel:\/\/\[user:password@\]host:port/);
    expect(() => sentinelOptions('redis+sentinel://127.0.0.1/m')).toThrow(/sentinel "127.0.0.1" is not host:port/);
    expect(() => sentinelOptions('redis+sentinel://127.0.0.1:99999/m')).toThrow(/not host:port/);
  });
});
