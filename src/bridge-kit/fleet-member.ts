import type { AccountFigures, BridgeReport, StopOutDirective, StopOutEvent } from '../domain/bridge-protocol';
import type { Book, TradeEvent, TradesAnswer } from '../domain/trade-events';
import type { AccountLink } from './account-link';
import { acknowledgedEvents, tradesAnswerOf } from './client';
import type { CallBatcher } from './batcher';
import type { FleetAccount } from './session';

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
  /** When a refused hello may be tried again. */
  helloAfter = 0;
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
