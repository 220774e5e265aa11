import fs from 'node:fs';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import Redis from 'ioredis';
import { testEnv } from '../../support/env';
import { temporalClient } from '../helpers/temporal';
import { aofState, isPortOpen, redisPing, startRedis, TEMPORAL_SEARCH_ATTRIBUTES, waitFor, type RedisServer } from '../../support/infra';

describe('test infrastructure', () => {
  const env = testEnv();

  describe('when globalSetup has run', () => {
    let connection: Connection;
    beforeAll(async () => {
      ({ connection } = await temporalClient());
    });
    afterAll(async () => {
      await connection?.close();
    });

    it('then the workers see the Temporal and Redis coordinates in process.env', () => {
      expect(env.temporalAddress).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(env.temporalAddress).not.toBe('127.0.0.1:7233');
      if (process.env.TEST_TEMPORAL_PROFILE === 'external') {
        expect(env.temporalNamespaceB).toBe(`${env.temporalNamespace}-b`);
      } else {
        expect(env.temporalNamespace).toBe('default');
        expect(env.temporalNamespaceB).toBe('region-b');
      }
      expect(env.redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
      expect(env.redisUrl).not.toBe('redis://127.0.0.1:6379');
      expect(env.temporalBin).toMatch(/\/temporal$/);
      // The dev server's SQLite file, or the cluster profile's PostgreSQL data directory.
      if (process.env.TEST_TEMPORAL_PROFILE === 'cluster') expect(fs.existsSync(path.join(env.temporalDb, 'PG_VERSION'))).toBe(true);
      else if (process.env.TEST_TEMPORAL_PROFILE !== 'external') expect(env.temporalDb).toMatch(/\.db$/);
    });

    it('then Temporal answers on that address and lists our search attributes with their types', async () => {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: env.temporalNamespace });
      for (const name of ['SignalId', 'AccountId', 'Action', 'Symbol', 'Outcome', 'Reason']) {
        // 2 = INDEXED_VALUE_TYPE_KEYWORD
        expect({ name, type: customAttributes?.[name] }).toEqual({ name, type: 2 });
      }
      // 7 = INDEXED_VALUE_TYPE_KEYWORD_LIST
      expect(customAttributes?.AccountIds).toBe(7);
      expect([...TEMPORAL_SEARCH_ATTRIBUTES].sort()).toEqual([
        'AccountId',
        'AccountIds',
        'Action',
        'Outcome',
        'OwnerId',
        'Reason',
        'ReceivedAt',
        'SignalId',
        'Symbol',
      ]);
    });

    it('then namespace region-b exists, with the same search attributes', async () => {
      const ns = await connection.workflowService.describeNamespace({ namespace: env.temporalNamespaceB });
      expect(ns.namespaceInfo?.name).toBe('region-b');
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'region-b' });
      expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining([...TEMPORAL_SEARCH_ATTRIBUTES]));
    });

    it('then Redis answers PING', async () => {
      const redis = new Redis(env.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        expect(await redis.ping()).toBe('PONG');
      } finally {
        redis.disconnect();
      }
    });
  });

  describe('when a private redis-server is stopped and started again', () => {
    let server: RedisServer | undefined;
    afterAll(async () => {
      await server?.stop();
    });

    it('then it is gone in between and answers again on the same port', async () => {
      server = await startRedis();
      expect(server.url).not.toBe(env.redisUrl);
      expect(await redisPing(server.url)).toBe(true);
      const firstPid = server.pid;

      await server.stop();
      expect(await isPortOpen(server.port)).toBe(false);
      expect(await redisPing(server.url, 300)).toBe(false);
      expect(() => process.kill(-firstPid, 0)).toThrow();

      await server.start();
      expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
      expect(server.pid).not.toBe(firstPid);
      expect(await redisPing(server.url)).toBe(true);
      // The global Redis was not touched.
      expect(await redisPing(env.redisUrl)).toBe(true);
    });
  });

  describe('when a redis-server is killed with SIGKILL after acknowledging writes, and started again', () => {
    const servers: RedisServer[] = [];
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
    });

    /** 1000 acknowledged writes, SIGKILL, start again: how many of them are still there. */
    async function writesAfterCrash(durable: boolean): Promise<{ keys: number; counter: string | null }> {
      const server = await startRedis({ durable });
      servers.push(server);
      const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
      try {
        const tx = client.pipeline();
        for (let i = 0; i < 999; i++) tx.set(`k:${i}`, String(i));
        tx.incrby('counter', 999);
        await tx.exec();
      } finally {
        client.disconnect();
      }
      // everysec answers before writing the file while a slow fsync runs (up to 2 s; seen here under load: 373 of
      // 1000 acknowledged writes lost to a SIGKILL). What this checks is the file once Redis has written it.
      if (durable)
        await waitFor('Redis to write every acknowledged write to its append-only file', async () => (await aofState(server.url)).pendingBytes === 0, 5_000);
      await server.kill9();
      expect(await isPortOpen(server.port)).toBe(false);
      await server.start();
      const after = new Redis(server.url, { maxRetriesPerRequest: 1 });
      try {
        return { keys: await after.dbsize(), counter: await after.get('counter') };
      } finally {
        after.disconnect();
      }
    }

    it('then a durable one (AOF, appendfsync everysec) has every write it had written to its append-only file', async () => {
      expect(await writesAfterCrash(true)).toEqual({ keys: 1000, counter: '999' });
      expect(servers[0]!.durable).toBe(true);
    });

    it('then a throwaway one (the default) starts empty', async () => {
      expect(await writesAfterCrash(false)).toEqual({ keys: 0, counter: null });
    });
  });
});
