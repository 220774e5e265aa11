import type { Redis } from 'ioredis';
import { LINKS_CHANGED_CHANNEL, type CtraderLinks, type OpenedLink } from './links';
import type { RunningConnector } from './connector';

/**
 * Keeps the running connector in step with the accounts owners link with "Connect with cTrader": at start, on every
 * change published in Redis (at once), and every `reloadMs` besides (a missed message, a Redis restart). A new link
 * starts its account; a new grant or bridge token (the link's version moved) restarts it with them; an unlinked
 * account, or one cTrader no longer takes the tokens of (needs re-authorisation), is stopped, so that nothing keeps
 * knocking at cTrader with refused tokens. Accounts of the credentials file are left alone.
 */
export interface LinkedAccountsOptions {
  links: CtraderLinks;
  /** A connection of its own: a subscribed ioredis connection can do nothing else. */
  subscriber: Redis;
  connector: RunningConnector;
  reloadMs: number;
  diag: (line: Record<string, unknown>) => void;
  now?: () => Date;
}

export interface LinkedAccountsWatch {
  /** Resolves after the reload that is running or asked for now. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

export async function watchLinkedAccounts(opts: LinkedAccountsOptions): Promise<LinkedAccountsWatch> {
  const { links, connector, diag } = opts;
  const now = opts.now ?? (() => new Date());
  /** The linked accounts this watch runs, by id, with the link version they run with. */
  const mine = new Map<string, number>();
  const foreign = new Set<string>();
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;

  const start = (link: OpenedLink) => {
    const id = link.accountId;
    connector.add(
      {
        accountId: id,
        ctidTraderAccountId: link.ctidTraderAccountId,
        environment: link.environment,
        bridgeToken: link.bridgeToken,
        ...link.tokens,
      },
      {
        tokens: { updateTokens: (_accountId, tokens) => links.saveRefreshed(id, link.version, tokens) },
        onTokensRefused: (errorCode) => {
          void links
            .markNeedsReauthorisation(id, errorCode, now())
            .then(() => watch.reload())
            .catch((err: unknown) => diag({ event: 'reauthorisation_mark_failed', accountId: id, error: String(err) }));
        },
      },
    );
    mine.set(id, link.version);
  };

  const once = async () => {
    const { links: all, unreadable } = await links.openAll();
    for (const id of unreadable) diag({ event: 'linked_account_unreadable', accountId: id });
    const wanted = new Map(all.filter((l) => l.needsReauthorisation === null).map((l) => [l.accountId, l]));
    for (const [id, version] of [...mine]) {
      const link = wanted.get(id);
      if (link && link.version === version) continue;
      mine.delete(id);
      await connector.remove(id);
    }
    for (const link of wanted.values()) {
      if (mine.has(link.accountId) || stopped) continue;
      if (connector.has(link.accountId)) {
        // The same account in the credentials file: the file's entry runs, once.
        if (!foreign.has(link.accountId)) diag({ event: 'linked_account_in_credentials_file', accountId: link.accountId });
        foreign.add(link.accountId);
        continue;
      }
      start(link);
    }
  };

  const watch: LinkedAccountsWatch = {
    reload() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          await once().catch((err: unknown) => diag({ event: 'linked_accounts_reload_failed', error: String(err) }));
        } while (again && !stopped);
        running = undefined;
      })();
      return running;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      opts.subscriber.disconnect();
      await running;
    },
  };

  opts.subscriber.on('message', (channel: string) => {
    if (channel === LINKS_CHANGED_CHANNEL) void watch.reload();
  });
  await opts.subscriber.subscribe(LINKS_CHANGED_CHANNEL);
  const timer = setInterval(() => void watch.reload(), opts.reloadMs);
  timer.unref();
  await watch.reload();
  return watch;
}
