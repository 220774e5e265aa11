import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CredentialStore, type AccountCredential } from '../../src/ctrader/credentials';
import { SecretBox } from '../../src/secret-box';
import { processLogDir, ServiceProcess } from '../../support/processes';

/**
 * The built cTrader connector (`node dist/src/ctrader/main.js`) as its own process, with an
 * encrypted credentials file and a state directory of its own that survive restarts (as on an operator's machine).
 */

export interface ConnectorSetup {
  dir: string;
  key: string;
  credentialsFile: string;
  stateDir: string;
  store: CredentialStore;
}

/** A private directory with an encrypted credentials file holding the application and the accounts. */
export function connectorSetup(label: string, application: { clientId: string; clientSecret: string }, accounts: AccountCredential[]): ConnectorSetup {
  const dir = path.join(processLogDir(), `ctrader-${label}-${randomBytes(3).toString('hex')}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64');
  const credentialsFile = path.join(dir, 'credentials.enc');
  const store = new CredentialStore(credentialsFile, SecretBox.fromBase64(key, 'CTRADER_CREDENTIALS_KEY'));
  store.write({ application, accounts });
  return { dir, key, credentialsFile, stateDir: path.join(dir, 'state'), store };
}

/** The credentials linking registry accounts to Open API accounts (the i-th ctid and grant each), on demo. */
export function linkedAccounts(
  accounts: { id: string; bridgeToken: string }[],
  ctids: number[],
  grants: { accessToken: string; refreshToken: string }[],
): AccountCredential[] {
  return accounts.map((a, i) => ({ accountId: a.id, ctidTraderAccountId: ctids[i]!, environment: 'demo' as const, bridgeToken: a.bridgeToken, ...grants[i]! }));
}

export interface ConnectorProcess extends ServiceProcess {
  readonly accountIds: string[];
  /** The `event: "command"` lines of its stdout (current run). */
  commands(): Record<string, unknown>[];
}

function connectorEnv(setup: ConnectorSetup, demoUrl: string, ingressUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  const base: Record<string, string> = {};
  for (const n of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) if (process.env[n] !== undefined) base[n] = process.env[n]!;
  return {
    ...base,
    INGRESS_URL: ingressUrl,
    CTRADER_CREDENTIALS_KEY: setup.key,
    CTRADER_CREDENTIALS_FILE: setup.credentialsFile,
    CTRADER_STATE_DIR: setup.stateDir,
    CTRADER_DEMO_URL: demoUrl,
    CTRADER_LIVE_URL: demoUrl,
    CTRADER_WAIT_MS: '5000',
    ...extra,
  };
}

/** Starts it; ready when its stderr has a `hello` line for each of `accountIds` (each bridge loop is connected). */
export async function startConnectorProcess(opts: {
  setup: ConnectorSetup;
  accountIds: string[];
  demoUrl: string;
  ingressUrl: string;
  env?: Record<string, string> | undefined;
  label: string;
  readyTimeoutMs?: number;
  /** Runs once the process is spawned, while it starts (its lines are readable then). */
  whileStarting?: ((proc: ServiceProcess, ingressUrl: string) => void) | undefined;
}): Promise<ConnectorProcess> {
  const proc = new ServiceProcess({
    kind: 'ctrader-connector',
    name: `ctrader-connector-${opts.label}-${randomBytes(3).toString('hex')}`,
    args: [],
    env: connectorEnv(opts.setup, opts.demoUrl, opts.ingressUrl, opts.env),
    ready: async (p) => {
      const hellos = new Set(
        p
          .jsonLines('stderr')
          .filter((l) => l.event === 'hello')
          .map((l) => l.accountId),
      );
      return opts.accountIds.every((id) => hellos.has(id));
    },
    readyTimeoutMs: opts.readyTimeoutMs ?? 30_000,
  });
  const connector = Object.assign(proc, {
    accountIds: opts.accountIds,
    commands: () => proc.jsonLines('stdout').filter((l) => l.event === 'command'),
  });
  const started = connector.start();
  opts.whileStarting?.(proc, opts.ingressUrl);
  await started;
  return connector;
}
