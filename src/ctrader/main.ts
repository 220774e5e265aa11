import { openRedis } from '../redis';
import { SecretBox } from '../secret-box';
import { loadConnectorConfig } from './config';
import { startConnector } from './connector';
import { CredentialStore, describeCredentials, parseKey } from './credentials';
import { watchLinkedAccounts, type LinkedAccountsWatch } from './linked-accounts';
import { CtraderLinks } from './links';

/**
 * The cTrader connector (docs/ctrader-connector.md): one process serving every cTrader account of the encrypted
 * credentials file and, with REDIS_URL and CTRADER_TOKENS_KEY_FILE, every account owners link with "Connect with
 * cTrader" (picked up while it runs), one Open API connection per environment (demo, live) shared by its accounts,
 * one bridge loop per account towards the ingress.
 *
 *   npm run ctrader-connector                          run
 *   npm run ctrader-connector -- credentials put      < doc.json   (store an application and/or accounts)
 *   npm run ctrader-connector -- credentials list                  (no secret is shown)
 *   npm run ctrader-connector -- credentials remove ACCOUNT_ID
 *
 * stdout: one JSON line per handled command. stderr: JSON lines of connection events. No line carries a token.
 */

const USAGE = `usage: ctrader-connector [run | credentials put | credentials list | credentials remove ACCOUNT_ID]
Settings are environment variables (docs/ctrader-connector.md, "Running it"); the credentials verbs need CTRADER_CREDENTIALS_KEY.`;

const diag = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);

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
  const store =
    config.credentialsKey !== undefined || verb === 'credentials' ? new CredentialStore(config.credentialsFile, parseKey(config.credentialsKey)) : undefined;
  if (verb === 'credentials' && store) {
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
  const creds = store?.read() ?? { accounts: [] };
  const application = config.application ? { clientId: config.application.clientId, clientSecret: config.application.clientSecret() } : creds.application;
  if (!application)
    throw new Error(
      'no Open API application: set CTRADER_OAUTH_CLIENT_ID and CTRADER_OAUTH_CLIENT_SECRET_FILE, or run `credentials put` with {"application": {...}}',
    );
  if (creds.accounts.length === 0 && !config.linked)
    throw new Error('no cTrader account: run `credentials put` with {"accounts": [...]}, or set REDIS_URL and CTRADER_TOKENS_KEY_FILE for linked accounts');
  const running = startConnector(config, application, creds.accounts, diag, store);
  let watch: LinkedAccountsWatch | undefined;
  let redis: ReturnType<typeof openRedis> | undefined;
  if (config.linked) {
    const box = SecretBox.fromFile(config.linked.tokensKeyFile, 'CTRADER_TOKENS_KEY_FILE');
    redis = openRedis(config.linked.redisUrl, {});
    watch = await watchLinkedAccounts({
      links: new CtraderLinks(redis, box),
      subscriber: openRedis(config.linked.redisUrl, {}),
      connector: running,
      reloadMs: config.linked.reloadMs,
      diag,
    });
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    diag({ event: 'stopping', signal });
    void (watch?.stop() ?? Promise.resolve())
      .then(() => running.stop())
      .then(() => redis?.disconnect())
      .then(() => {
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
