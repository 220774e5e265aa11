import type { AccountFigures, BridgeReport, StopOutDirective, StopOutEvent } from '../domain/bridge-protocol';
import type { Book, TradeEvent, TradesAnswer } from '../domain/trade-events';
import type { AccountLink } from './account-link';
import { acknowledgedEvents, tradesAnswerOf } from './client';
import type { CallBatcher } from './batcher';
import type { FleetAccount } from './session';

/**
 * A refused hello (a revoked token, a wrong platform, a registry being re-imported) is tried again after 250 ms, then
 * after twice as long at each refusal up to 30 s: not on every poll for a token that stays refused (8 tries in its
 * first minute, then 2 a minute), and not seconds late for a refusal that lasted a moment (a re-import's second).
 */
const REFUSED_HELLO_FIRST_RETRY_MS = 250;
const REFUSED_HELLO_LAST_RETRY_MS = 30_000;

/** How long after its `refusals`-th refusal in a row an account's hello is tried again. */
export function refusedHelloRetryMs(refusals: number): number {
  return Math.min(REFUSED_HELLO_FIRST_RETRY_MS * 2 ** Math.max(0, refusals - 1), REFUSED_HELLO_LAST_RETRY_MS);
}

/** The batched calls of the session an account is in. */
export interface SessionCalls {
  reports: CallBatcher;
  trades: CallBatcher;
}

/**
 * One account inside a multi-account session: its link to the service goes through the session's batched calls,
 * tagged with its accountId; its state says whether the session serves it now and when its figures last went.
 */
export class SessionMember implements AccountLink {
  arming: StopOutDirective | undefined;
  /** The session serves the account: its hello was admitted and nothing since lost it. */
  online = false;
  /** Bumped when the account is lost (a failed command, a refused report): batches of before it run no further. */
  epoch = 0;
  /** When a refused hello may be tried again, and how many of its hellos in a row were refused. */
  helloAfter = 0;
  refusals = 0;
  figuresSentAt = 0;
  /** The account's helpers beside the loop have this link (from its first admitted hello on). */
  linked = false;
  calls: SessionCalls | undefined;

  constructor(readonly account: FleetAccount) {}

  get accountId(): string {
    return this.account.accountId;
  }

  /** The account leaves the session's service until its next hello: what waits of its batches is dropped. */
  lost(): void {
    this.online = false;
    this.epoch++;
  }

  private through(): SessionCalls {
    if (!this.online || !this.calls) throw new Error(`${this.accountId} is not in a session yet`);
    return this.calls;
  }

  async sendReports(reports: BridgeReport[], account: AccountFigures | undefined): Promise<{ commandId: string; result: string }[]> {
    const answer = await this.through().reports.submit(this.accountId, { reports, ...(account ? { account } : {}) });
    if (account) this.figuresSentAt = Date.now();
    return Array.isArray(answer.results) ? (answer.results as { commandId: string; result: string }[]) : [];
  }

  async sendEvents(events: StopOutEvent[], account?: AccountFigures): Promise<string[]> {
    const answer = await this.through().reports.submit(this.accountId, { reports: [], events, ...(account ? { account } : {}) });
    return acknowledgedEvents(answer);
  }

  async sendTrades(body: { events: TradeEvent[]; book?: Book; account?: AccountFigures }): Promise<TradesAnswer> {
    return tradesAnswerOf(await this.through().trades.submit(this.accountId, body));
  }
}
