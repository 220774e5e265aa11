import type { AccountFigures, BridgeHello, BridgeReport } from '../domain/bridge-protocol';
import { BridgeClient } from './client';
import type { AccountLink } from './account-link';
import type { Serial } from './serial';
import type { StopOutWatch } from './stop-out-watch';

/**
 * One account's own session loop (a paper terminal or a cTrader account alone, and every account of a process whose
 * ingress has no multi-account sessions; many accounts otherwise go through src/bridge-kit/fleet.ts): hello, long-poll,
 * the delivered commands in `seq` order one at a time beside nothing else that touches the broker, their reports with
 * the account's figures, a heartbeat when nothing carried the figures for a while. Any failure ends the session: the
 * next one says hello again after a bounded backoff, and the service hands out again what was not reported.
 * What differs between bridges is the peer: how it says hello and how it turns one command into a report.
 */

export interface SessionPeer {
  /** The hello's body: the bridge's version, capabilities, symbols and figures. */
  helloBody(): Promise<BridgeHello>;
  /** After the service took the hello: diagnostics, and whatever waits for a session (trade events, management). */
  helloDone(answer: { accountId?: string }): void;
  /**
   * One delivered command → its report (undefined when there is nothing to report against). Throwing ends the session
   * after the batch's earlier reports are sent: the commands after it wait for the next session.
   */
  handle(raw: unknown): Promise<BridgeReport | undefined>;
  /** The account's figures now; undefined when they cannot be read in time (reports then go without them). */
  figures(): Promise<AccountFigures | undefined>;
  /** A fault hook (the paper bridge's drop-before-report): true drops these reports and ends the session unsent. */
  dropReports?(reports: BridgeReport[]): boolean;
}

/** What a bridge hands a multi-account process for each of its accounts: the parts its own session loop would use. */
export interface FleetAccount {
  accountId: string;
  bridgeToken: string;
  peer: SessionPeer;
  /** The one lane to the broker, shared with the stop-out and trade management. */
  serial: Serial;
  stopOut: StopOutWatch;
  stats: { hellos: number; polls: number; heartbeats: number; reportsSent: number };
  /** Starts what sends beside the loop (stop-out, trade events) with the account's link to the service. */
  withLink(link: AccountLink): void;
}

/** What a session counts, for tests and logs; the owner's own stats object, so its readers see one place. */
interface SessionStats {
  hellos: number;
  polls: number;
  heartbeats: number;
  reportsSent: number;
}

/** How a bridge reaches the service: what its own options say of it. */
export interface SessionConnection {
  ingressUrl: string;
  bridgeToken: string;
  fetch?: typeof fetch;
  backoff?: { initialMs?: number; maxMs?: number };
  /** The long-poll's wait; default 20 000 ms. */
  waitMs?: number;
  /** Sends the account's figures alone when nothing carried them for this long; 0: never. Default 30 000 ms. */
  heartbeatMs?: number;
}

/** The connection's fields of a bridge's options (which hold more). */
export function connectionOf({ ingressUrl, bridgeToken, fetch, backoff, waitMs, heartbeatMs }: SessionConnection): SessionConnection {
  return { ingressUrl, bridgeToken, fetch, backoff, waitMs, heartbeatMs };
}

export interface SessionOptions extends SessionConnection {
  accountId: string;
  /** The one lane to the broker, shared with the stop-out and trade management. */
  serial: Serial;
  /** Looks again after every batch (inside the lane), when the batch ended without a lost answer. */
  stopOut: StopOutWatch;
  stats: SessionStats;
  clock?: () => number;
  diag: (line: Record<string, unknown>) => void;
}

export class BridgeSession {
  private running = false;
  private abort = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  private lastError: string | undefined;
  /** When the account's figures last went to the service (with the hello, reports or alone). */
  private figuresSentAt = 0;
  private readonly clock: () => number;
  client!: BridgeClient;

  constructor(
    private readonly opts: SessionOptions,
    private readonly peer: SessionPeer,
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  /** Starts the loop; `withClient` runs first, so what sends beside the loop (stop-out, trade events) has its client. */
  start(withClient: (client: BridgeClient) => void): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    const { ingressUrl, bridgeToken, fetch, backoff, accountId, diag } = this.opts;
    this.client = new BridgeClient({ ingressUrl, bridgeToken, fetch, backoff, signal: this.abort.signal, accountId, diag });
    withClient(this.client);
    this.loopDone = this.loop();
  }

  /** Aborts the poll in flight and any backoff; resolves once the loop has ended (a batch in hand finishes first). */
  async stop(): Promise<void> {
    if (!this.running) return this.loopDone;
    this.running = false;
    this.abort.abort();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    let delay = this.client.initialBackoff;
    let connected = false;
    while (this.running) {
      try {
        if (!connected) {
          await this.hello();
          connected = true;
        }
        const commands = await this.client.poll(this.opts.waitMs ?? 20_000);
        this.opts.stats.polls++;
        delay = this.client.initialBackoff;
        this.lastError = undefined;
        const { reports, lost } = commands.length === 0 ? { reports: [], lost: undefined } : await this.handleBatch(commands);
        if (reports.length === 0) {
          if (lost !== undefined) throw asError(lost);
          await this.heartbeatIfDue();
          continue;
        }
        if (this.peer.dropReports?.(reports)) {
          connected = false;
          await this.client.sleep(delay);
          continue;
        }
        // Every report carries the account's figures as they are now (protocol 1.2), unless the broker is out of reach.
        await this.send(reports, lost === undefined ? await this.peer.figures() : undefined);
        if (lost !== undefined) throw asError(lost);
      } catch (err) {
        if (!this.running) break;
        connected = false;
        const message = (err as Error)?.message ?? String(err);
        if (message !== this.lastError)
          this.opts.diag({ time: this.now(), event: 'connection_error', accountId: this.opts.accountId, error: message, retryInMs: delay });
        this.lastError = message;
        await this.client.sleep(delay);
        delay = Math.min(delay * 2, this.client.maxBackoff);
      }
    }
  }

  private async hello(): Promise<void> {
    const body = await this.peer.helloBody();
    const answer = await this.client.hello(body);
    if (body.account) this.figuresSentAt = this.clock();
    this.opts.stats.hellos++;
    this.peer.helloDone(answer);
  }

  private handleBatch(commands: unknown[]): Promise<BatchOutcome> {
    return handleBatch({ ...this.opts, peer: this.peer }, commands, () => this.running);
  }

  private async send(reports: BridgeReport[], figures: AccountFigures | undefined): Promise<void> {
    await this.client.sendReports(reports, figures);
    if (figures) this.figuresSentAt = this.clock();
    this.opts.stats.reportsSent += reports.length;
  }

  private async heartbeatIfDue(): Promise<void> {
    const every = this.opts.heartbeatMs ?? 30_000;
    if (every <= 0 || this.clock() - this.figuresSentAt < every) return;
    const figures = await this.peer.figures();
    if (!figures) return;
    await this.client.sendReports([], figures);
    this.figuresSentAt = this.clock();
    this.opts.stats.heartbeats++;
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }
}

/** What a batch of delivered commands came to: the reports of the commands handled, and the error that stopped it. */
export interface BatchOutcome {
  reports: BridgeReport[];
  lost: unknown;
}

/**
 * The batch in the account's broker lane, in order, stopping at the first command whose answer was lost (or when
 * `goOn` says the account's session is over); then the stop-out looks again. The one way every loop of the kit runs
 * delivered commands, an account's own session and a multi-account one alike.
 */
export function handleBatch(
  account: { accountId: string; serial: Serial; stopOut: StopOutWatch; peer: SessionPeer; diag: (line: Record<string, unknown>) => void },
  commands: unknown[],
  goOn: () => boolean,
): Promise<BatchOutcome> {
  return account.serial.run(async () => {
    const reports: BridgeReport[] = [];
    for (const raw of commands) {
      if (!goOn()) return { reports, lost: undefined };
      try {
        const report = await account.peer.handle(raw);
        if (report) reports.push(report);
      } catch (err) {
        return { reports, lost: err ?? new Error('a command failed') };
      }
    }
    await account.stopOut
      .look()
      .catch((err: unknown) => account.diag({ time: new Date().toISOString(), event: 'stop_out_error', accountId: account.accountId, error: String(err) }));
    return { reports, lost: undefined };
  });
}

/** An account's own session loop (its own hello, long-poll and reports), started; what the fleet's fallback runs too. */
export function startAccountSession(
  connection: SessionConnection,
  account: FleetAccount,
  extra: { clock?: () => number; diag: (line: Record<string, unknown>) => void },
): BridgeSession {
  const { accountId, serial, stopOut, stats, peer } = account;
  const session = new BridgeSession({ ...connection, accountId, serial, stopOut, stats, ...extra }, peer);
  session.start((client) => account.withLink(client));
  return session;
}

export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error('a command failed', { cause: err });
}
