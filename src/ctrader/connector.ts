import path from 'node:path';
import type { ConnectorConfig } from './config';
import { CtraderAccount, type TokenSink } from './account';
import { CtraderBridge } from './bridge';
import { OpenApiConnection } from './connection';
import type { AccountCredential, CredentialStore } from './credentials';
import { CommandStore } from './store';
import { BridgeFleet } from '../bridge-kit/fleet';

/**
 * The connector's running set of accounts: one Open API connection per environment (demo, live) shared by its
 * accounts, and towards the ingress the kit's fleet (src/bridge-kit/fleet.ts): every account on multi-account
 * sessions over a fixed pool of connections (`INGRESS_CONNECTIONS`), hellos and books in batches; one loop per account
 * only when the ingress serves no sessions. Accounts come and go while it runs (linked with
 * "Connect with cTrader"); a connection is opened the first time an account of its environment needs it.
 */

export interface RunningConnector {
  bridges: CtraderBridge[];
  connections: OpenApiConnection[];
  /** Starts one more account on the running connector (a newly linked one). */
  add(credential: AccountCredential, hooks?: AccountHooks): void;
  /** Stops one account (unlinked, or about to restart with new tokens). */
  remove(accountId: string): Promise<void>;
  has(accountId: string): boolean;
  stop(): Promise<void>;
}

/** Where one account's refreshed tokens go, and who hears that cTrader refused them. */
interface AccountHooks {
  tokens?: TokenSink;
  onTokensRefused?: (errorCode: string) => void;
}

export function startConnector(
  config: ConnectorConfig,
  application: { clientId: string; clientSecret: string },
  accounts: AccountCredential[],
  diag: (line: Record<string, unknown>) => void,
  store?: CredentialStore,
): RunningConnector {
  const connections = new Map<'demo' | 'live', OpenApiConnection>();
  const connectionFor = (env: 'demo' | 'live') => {
    let c = connections.get(env);
    if (!c) {
      c = new OpenApiConnection({
        url: config.urls[env],
        clientId: application.clientId,
        clientSecret: application.clientSecret,
        requestsPerSecond: config.requestsPerSecond,
        heartbeatMs: config.heartbeatMs,
        requestTimeoutMs: config.requestTimeoutMs,
        label: env,
        diag,
      });
      connections.set(env, c);
      if (started) c.start();
    }
    return c;
  };
  const fleet = new BridgeFleet({
    ingressUrl: config.ingressUrl,
    waitMs: config.waitMs,
    heartbeatMs: config.figuresHeartbeatMs,
    diag,
  });
  let started = false;
  const running = new Map<string, { account: CtraderAccount; bridge: CtraderBridge; commands: CommandStore }>();
  const add = (credential: AccountCredential, hooks: AccountHooks = {}) => {
    if (running.has(credential.accountId)) throw new Error(`account ${credential.accountId} is already running`);
    const account = new CtraderAccount({
      credential,
      connection: connectionFor(credential.environment),
      store: hooks.tokens ?? store,
      refreshAheadMs: config.refreshAheadMs,
      diag,
      ...(hooks.onTokensRefused ? { onTokensRefused: hooks.onTokensRefused } : {}),
    });
    const fileBase = path.join(config.stateDir, credential.accountId.replace(/[^A-Za-z0-9._-]/g, '_'));
    const commands = new CommandStore(`${fileBase}.commands.jsonl`);
    const bridge = new CtraderBridge({
      account,
      store: commands,
      marksFile: `${fileBase}.marks.json`,
      tradesFile: `${fileBase}.trade-events.json`,
      managementFile: `${fileBase}.management.json`,
      ingressUrl: config.ingressUrl,
      bridgeToken: credential.bridgeToken,
      waitMs: config.waitMs,
      heartbeatMs: config.figuresHeartbeatMs,
      diag,
    });
    running.set(credential.accountId, { account, bridge, commands });
    if (started) {
      fleet.add(bridge.asFleetAccount());
      diag({ event: 'account_added', accountId: credential.accountId, environment: credential.environment });
    }
  };
  const remove = async (accountId: string) => {
    const r = running.get(accountId);
    if (!r) return;
    running.delete(accountId);
    await fleet.remove(accountId);
    await r.bridge.stop();
    r.account.stop();
    r.commands.close();
    diag({ event: 'account_removed', accountId });
  };
  for (const credential of accounts) add(credential);
  started = true;
  for (const c of connections.values()) c.start();
  fleet.start([...running.values()].map((r) => r.bridge.asFleetAccount()));
  diag({ event: 'started', accounts: accounts.map((a) => a.accountId), connections: [...connections.keys()] });
  return {
    get bridges() {
      return [...running.values()].map((r) => r.bridge);
    },
    get connections() {
      return [...connections.values()];
    },
    add,
    remove,
    has: (accountId) => running.has(accountId),
    async stop() {
      await fleet.stop();
      await Promise.all([...running.keys()].map((id) => remove(id)));
      await Promise.all([...connections.values()].map((c) => c.stop()));
    },
  };
}
