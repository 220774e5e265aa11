import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../support/infra';
import { processLogDir, ServiceProcess } from '../../support/processes';
import { CtraderDouble } from './ctrader-double';
import { CtraderOAuthStandin } from './ctrader-oauth-standin';
import { ownerKeyFile } from './owner';
import { startStack, type Stack, type Tuning } from './stack';

/**
 * Connect with cTrader end to end on loopback: the Open API double (demo and live accounts of one cTID), the stand-in
 * for Spotware's granting-access page and token endpoint, the service (on a port chosen first, as the redirect URI
 * names it: PUBLIC_URL's dashboard callback) with its Config's cTrader URLs pointing at the stand-in (tuning), and the connector as its own process reading linked
 * accounts from the service's Redis.
 */

export interface ConnectWorld {
  /** The cTID's demo and live accounts; unique to this world, as test files share one Redis (a ctid links once). */
  demoCtid: number;
  liveCtid: number;
  double: CtraderDouble;
  standin: CtraderOAuthStandin;
  stack: Stack;
  tokensKeyFile: string;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

export async function startConnectWorld(tuning: Tuning = {}): Promise<ConnectWorld> {
  const clientId = `app-${randomBytes(4).toString('hex')}`;
  const clientSecret = `cs-${randomBytes(16).toString('hex')}`;
  const demoCtid = 1_000_000 + randomBytes(3).readUIntBE(0, 3) * 2;
  const liveCtid = demoCtid + 1;
  const double = await CtraderDouble.start({
    clientId,
    clientSecret,
    accounts: [
      { ctid: demoCtid, accessToken: 'unused-a', refreshToken: 'unused-r', isLive: false, traderLogin: 5_550_001, brokerTitleShort: 'Demo Markets' },
      { ctid: liveCtid, accessToken: 'unused-b', refreshToken: 'unused-s', isLive: true, traderLogin: 5_550_002, brokerTitleShort: 'Live Markets' },
    ],
  });
  const port = await freePort();
  const redirectUrl = `http://127.0.0.1:${port}/dashboard/ctrader/callback`;
  const standin = await CtraderOAuthStandin.start({ clientId, clientSecret, redirectUrl, double, ctids: [demoCtid, liveCtid] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctrader-connect-'));
  const secretFile = path.join(dir, 'client-secret');
  fs.writeFileSync(secretFile, `${clientSecret}\n`, { mode: 0o600 });
  const tokensKeyFile = ownerKeyFile();
  const stack = await startStack({
    env: {
      PORT: String(port),
      OWNER_SECRETS_KEY_FILE: ownerKeyFile(),
      DASHBOARD_SECURE_COOKIES: 'false',
      CTRADER_OAUTH_CLIENT_ID: clientId,
      CTRADER_OAUTH_CLIENT_SECRET_FILE: secretFile,
      CTRADER_TOKENS_KEY_FILE: tokensKeyFile,
    },
    tuning: {
      ...tuning,
      ctraderOAuth: { authorizeUrl: standin.authorizeUrl, tokenUrl: standin.tokenUrl, accountListUrl: double.url, ...tuning.ctraderOAuth },
    },
  });
  // The redirect URI follows PUBLIC_URL (here http://HOST:PORT); the stand-in was told it before the service started.
  if (stack.config.ctraderOAuth?.redirectUrl !== redirectUrl) {
    await stack.stop();
    throw new Error(`the service's redirect URI ${stack.config.ctraderOAuth?.redirectUrl} is not the stand-in's ${redirectUrl}`);
  }
  return {
    demoCtid,
    liveCtid,
    double,
    standin,
    stack,
    tokensKeyFile,
    clientId,
    clientSecret,
    async stop() {
      await stack.stop();
      await standin.close();
      await double.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The connector with no credentials file: only accounts linked in Redis, picked up while it runs. */
export async function startLinkedConnector(world: ConnectWorld, label: string): Promise<ServiceProcess> {
  const base: Record<string, string> = {};
  for (const n of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) if (process.env[n] !== undefined) base[n] = process.env[n]!;
  const proc = new ServiceProcess({
    kind: 'ctrader-connector',
    name: `ctrader-linked-${label}-${randomBytes(3).toString('hex')}`,
    args: [],
    env: {
      ...base,
      INGRESS_URL: world.stack.ingress.url,
      REDIS_URL: world.stack.config.redis.url,
      CTRADER_TOKENS_KEY_FILE: world.tokensKeyFile,
      CTRADER_OAUTH_CLIENT_ID: world.clientId,
      CTRADER_OAUTH_CLIENT_SECRET: world.clientSecret,
      CTRADER_STATE_DIR: path.join(processLogDir(), `ctrader-linked-${label}-${randomBytes(3).toString('hex')}`),
      CTRADER_DEMO_URL: world.double.url,
      CTRADER_LIVE_URL: world.double.url,
      CTRADER_WAIT_MS: '5000',
    },
    ready: async (p) => p.jsonLines('stderr').some((l) => l.event === 'started'),
    readyTimeoutMs: 30_000,
  });
  await proc.start();
  return proc;
}

/** The connector said hello for this account at least `count` times (each start of its bridge loop says hello once). */
export function hellos(proc: ServiceProcess, accountId: string): number {
  return proc.jsonLines('stderr').filter((l) => l.event === 'hello' && l.accountId === accountId).length;
}
