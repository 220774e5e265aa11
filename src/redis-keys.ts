/**
 * Every Redis key and channel the service uses, named once. The strings are stored data: a rolling deploy reads what
 * the previous version wrote, so none may change (test/unit/redis-keys.test.ts pins each one).
 *
 * A `{…}` in a key is a Redis Cluster hash tag: the keys of one account (or one signal, owner, task queue) share a
 * slot, so one Lua script may touch them all. Keys looked up by a credential's hash have no tag: each is read alone.
 */

/** An account's bridge: its command queue, acceptance order and long-polls (src/bridge/queue.ts, ordering.ts). */
export const bridgeKeys = {
  /** Sorted set: the account's queued commandIds, scored by sequence number. */
  commandQueue: (accountId: string) => `es:bq:{${accountId}}`,
  /** Hash: one command (its JSON, its number, when and in which session it was handed out, its report). */
  commandRecord: (accountId: string, commandId: string) => `es:bc:{${accountId}}:${commandId}`,
  /** Counter: the bridge's session, bumped by each hello (a new session is handed every unreported command again). */
  bridgeSession: (accountId: string) => `es:bs:{${accountId}}`,
  /**
   * Hash: a multi-account session (protocol 1.7), by its session token's SHA-256: accountId → the SHA-256 of the
   * bridge token that admitted it. Not hash-tagged: a session spans accounts, and only its own key is touched here.
   */
  multiAccountSession: (sessionHash: string) => `es:bms:${sessionHash}`,
  /** Counter: the newest long-poll's generation (an older poll of the account ends, superseded). */
  longPollGeneration: (accountId: string) => `es:bw:{${accountId}}`,
  /** The highest sequence number of the account ever handed to a bridge. */
  handedOutSeq: (accountId: string) => `es:bh:{${accountId}}`,
  /** Sorted set: brief records of reports for commands Redis does not hold, scored by when each lapses. */
  orphanReports: (accountId: string) => `es:bo:{${accountId}}`,
  /** Counter: the account's last sequence number. */
  sequence: (accountId: string) => `es:seq:{${accountId}}`,
  /**
   * The generation of the account's bridge data: set when Redis first numbers a signal of the account and never
   * changed. Another generation later (or none) means Redis lost the account's data in between (src/bridge/ordering.ts).
   */
  dataGeneration: (accountId: string) => `es:bg:{${accountId}}`,
  /** Sorted set: numbers taken whose command is not queued yet (`seq:deadline`), holding later commands behind them. */
  pendingMarks: (accountId: string) => `es:bp:{${accountId}}`,
  /** Pub/sub channel: a command queued, a mark released, a newer long-poll (`poll:<generation>`). */
  wakeChannel: (accountId: string) => `es:bn:{${accountId}}`,
  /** The account figures its bridge last sent (balance, equity, quotes). */
  figures: (accountId: string) => `es:figures:{${accountId}}`,
  /** Stop-outs: every event, the latest, and those not yet written to the owner's audit log. */
  stopOuts: (accountId: string) => `es:stop-outs:{${accountId}}`,
  latestStopOut: (accountId: string) => `es:stop-out-latest:{${accountId}}`,
  unauditedStopOuts: (accountId: string) => `es:stop-outs-unaudited:{${accountId}}`,
  /** The trade journal's keys all begin with this (src/trades/journal.ts). */
  tradesPrefix: (accountId: string) => `es:trades:{${accountId}}:`,
};

/** The account whose wake channel this is, or undefined for any other channel. */
export function accountOfWakeChannel(channel: string): string | undefined {
  return /^es:bn:\{(.*)\}$/.exec(channel)?.[1];
}

/** The registry (src/registry/records.ts): accounts, credentials by hash, the bridge's state. */
export const registryKeys = {
  account: (accountId: string) => `es:account:${accountId}`,
  /** Set: every account id. */
  accounts: 'es:accounts',
  secret: (hash: string) => `es:secret:${hash}`,
  token: (hash: string) => `es:token:${hash}`,
  bridgeToken: (hash: string) => `es:bridge:${hash}`,
  accountBridgeToken: (accountId: string) => `es:account-bridge:${accountId}`,
  retiredBridgeToken: (hash: string) => `es:bridge-retired:${hash}`,
  ownerAccountCap: (owner: string) => `es:owner-account-cap:${owner}`,
  bridgeState: (accountId: string) => `es:bridge-state:{${accountId}}`,
  bridgeSeen: (accountId: string) => `es:bridge-seen:{${accountId}}`,
  /**
   * What the account's bridge announced in its last hello (version, features), beside the account's record so that
   * an import, which replaces the record whole, leaves it as the bridge said.
   */
  bridgeAnnounced: (accountId: string) => `es:bridge-announced:{${accountId}}`,
  instruments: (accountId: string) => `es:instruments:{${accountId}}`,
  ownerIndex: (kind: string, owner: string) => `es:owner-index:${kind}:${owner}`,
};

/** Owners: their record, set-up links, audit log, sessions, API keys, cTrader OAuth, callback endpoints. */
export const ownerKeys = {
  owner: (owner: string) => `es:owner:${owner}`,
  /** Set: every owner id. */
  owners: 'es:owners',
  setup: (hash: string) => `es:owner-setup:${hash}`,
  audit: (owner: string) => `es:owner-audit:${owner}`,
  session: (hash: string) => `es:session:${hash}`,
  sessionsOf: (owner: string) => `es:owner-sessions:${owner}`,
  apiKey: (hash: string) => `es:owner-key:${hash}`,
  apiKeysOf: (owner: string) => `es:owner-keys:${owner}`,
  /** The address the ingress answers at, as it last started (src/owners/public-url.ts). */
  publicUrl: 'es:service:public-url',
  ctraderOAuthState: (hash: string) => `es:ctrader:oauth-state:${hash}`,
  ctraderOAuthPending: (hash: string) => `es:ctrader:oauth-pending:${hash}`,
  /**
   * `ep`: the owner's callback endpoints; `at`: their delivery attempts; `tc`, `tb` (with `:<minute>`): the trade-event
   * callbacks counted in a minute and those coalesced (src/callbacks/trade-coalescing.ts).
   */
  callbacks: (owner: string, what: 'ep' | 'at' | 'tc' | 'tb') => `es:cb:{${owner}}:${what}`,
};

/** The cTrader connector's links (src/ctrader/links.ts): account → cTrader account, and back. */
export const ctraderKeys = {
  /** Set: every linked account id. */
  links: 'es:ctrader:links',
  /** Pub/sub channel: the links changed (the connector reloads them at once). */
  linksChanged: 'es:ctrader:links-changed',
  link: (accountId: string) => `es:ctrader:link:${accountId}`,
  byCtid: (ctid: number) => `es:ctrader:ctid:${ctid}`,
};

/** The default prefix of the rate limiters' counters (RATE_LIMIT_KEY_PREFIX). */
export const RATE_LIMIT_KEY_PREFIX = 'es:rl:';

/** Signals: the reports the ingress recorded before Temporal did (the poll), the idempotency windows, the pending starts. */
export const signalKeys = {
  reportedOutcomes: (signalId: string) => `es:ro:{${signalId}}`,
  /** An idempotency key's window (src/signals/idempotency.ts): the first acceptance's record, for the window. */
  idempotencyWindow: (digest: string) => `es:idem:{${digest}}`,
  /** Accepted signals whose workflow is not started yet (src/signals/pending-starts.ts): one slot per task queue. */
  pendingStarts: (taskQueue: string) => ({
    claims: `es:starts:{${taskQueue}}`,
    accepted: `es:starts-accepted:{${taskQueue}}`,
    inputs: `es:start-inputs:{${taskQueue}}`,
  }),
};
