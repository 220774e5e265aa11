import path from 'node:path';
import { loadConnectorConfig, type ConnectorConfig } from './config';
import { CtraderAccount } from './account';
import { CtraderBridge } from './bridge';
import { OpenApiConnection } from './connection';
import { CredentialStore, describeCredentials, parseKey } from './credentials';
import { CommandStore } from './store';

/**
 * The cTrader connector (docs/ctrader-connector.md): one process serving every cTrader account of the encrypted
 * credentials file, one Open API connection per environment (demo, live) shared by its accounts, one bridge loop per
 * account towards the ingress.
 *
 *   npm run ctrader-connector                          run
 *   npm run ctrader-connector -- credentials put      < doc.json   (store an application and/or accounts)
 *   npm run ctrader-connector -- credentials list                  (no secret is shown)
 *   npm run ctrader-connector -- credentials remove ACCOUNT_ID
 *
 * stdout: one JSON line per handled command. stderr: JSON lines of connection events. No line carries a token.
 */

const USAGE = `usage: ctrader-connector [run | credentials put | credentials list | credentials remove ACCOUNT_ID]
Settings are environment variables (docs/ctrader-connector.md, "Running it"); CTRADER_CREDENTIALS_KEY is required.`;

const diag = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);

export interface RunningConnector {
  bridges: CtraderBridge[];
  connections: OpenApiConnection[];
  stop(): Promise<void>;
}

export function startConnector(config: ConnectorConfig, store: CredentialStore): RunningConnector {
  const creds = store.read();
  if (!creds.application) throw new Error('no Open API application in the credentials file: run `credentials put` with {"application": {...}}');
  if (creds.accounts.length === 0) throw new Error('no cTrader account in the credentials file: run `credentials put` with {"accounts": [...]}');
  const connections = new Map<'demo' | 'live', OpenApiConnection>();
  const connectionFor = (env: 'demo' | 'live') => {
    let c = connections.get(env);
    if (!c) {
      c = new OpenApiConnection({
        url: config.urls[env],
        clientId: creds.application!.clientId,
        clientSecret: creds.application!.clientSecret,
        requestsPerSecond: config.requestsPerSecond,
        heartbeatMs: config.heartbeatMs,
        requestTimeoutMs: config.requestTimeoutMs,
        label: env,
        diag,
      });
      connections.set(env, c);
    }
    return c;
  };
  const accounts: CtraderAccount[] = [];
  const bridges = creds.accounts.map((credential) => {
    const account = new CtraderAccount({ credential, connection: connectionFor(credential.environment), store, refreshAheadMs: config.refreshAheadMs, diag });
    accounts.push(account);
    const fileBase = path.join(config.stateDir, credential.accountId.replace(/[^A-Za-z0-9._-]/g, '_'));
    return new CtraderBridge({
      account,
      store: new CommandStore(`${fileBase}.commands.jsonl`),
      marksFile: `${fileBase}.marks.json`,
      ingressUrl: config.ingressUrl,
      bridgeToken: credential.bridgeToken,
      waitMs: config.waitMs,
      heartbeatMs: config.figuresHeartbeatMs,
      diag,
    });
  });
  for (const c of connections.values()) c.start();
  for (const b of bridges) b.start();
  diag({ event: 'started', accounts: creds.accounts.map((a) => a.accountId), connections: [...connections.keys()] });
  return {
    bridges,
    connections: [...connections.values()],
    async stop() {
      await Promise.all(bridges.map((b) => b.stop()));
      for (const a of accounts) a.stop();
      await Promise.all([...connections.values()].map((c) => c.stop()));
    },
  };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(argv: string[]): Promise<number> {
  const [verb = 'run', sub, arg] = argv;
  if (verb === '--help' || verb === '-h' || verb === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadConnectorConfig();
  const store = new CredentialStore(config.credentialsFile, parseKey(config.credentialsKey));
  if (verb === 'credentials') {
    if (sub === 'put') {
      let doc: unknown;
      try {
        doc = JSON.parse(await readStdin());
      } catch {
        // Not the parser's message: it quotes the input, which holds tokens.
        throw new Error('credentials put: standard input is not a JSON document');
      }
      const result = store.put(doc);
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    }
    if (sub === 'list') {
      process.stdout.write(`${JSON.stringify(describeCredentials(store.read()), null, 2)}\n`);
      return 0;
    }
    if (sub === 'remove' && arg) {
      const removed = store.remove(arg);
      process.stdout.write(`${JSON.stringify({ removed })}\n`);
      return removed ? 0 : 1;
    }
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  if (verb !== 'run') {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const running = startConnector(config, store);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    diag({ event: 'stopping', signal });
    void running.stop().then(() => {
      diag({ event: 'stopped' });
      process.exit(0);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return new Promise<number>(() => undefined);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      // Configuration and credential errors only: their messages name settings, never a secret's value.
      process.stderr.write(`ctrader-connector: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(2);
    },
  );
}
