import type { AccountFigures } from '../domain/bridge-protocol';
import { TradeOutbox } from '../bridge-kit/trade-outbox';
import { TradeSender } from '../bridge-kit/trade-sender';
import type { PaperBroker } from './broker';
import type { Ledger } from './ledger';
import { bookOf, tradeEventsOf } from './trade-events';

/**
 * A paper terminal's trade events (protocol 1.5, docs/paper-bridge.md "Trade events"): every broker operation goes to
 * the outbox (durably) before its ledger line and before the broker's state is saved, so a terminal killed at any
 * point sends each event after its restart, once; the sender delivers them and the book.
 */
export interface PaperTradesOptions {
  accountId: string;
  broker: PaperBroker;
  /** The outbox's file; undefined: in memory. */
  file?: string;
  clock: () => number;
  diag: (line: Record<string, unknown>) => void;
  figures: () => AccountFigures;
  /** Default 60 000. */
  bookEveryMs?: number;
}

export class PaperTrades {
  readonly outbox: TradeOutbox;
  readonly sender: TradeSender;

  constructor(opts: PaperTradesOptions) {
    this.outbox = new TradeOutbox({ file: opts.file, accountId: opts.accountId, diag: opts.diag, clock: opts.clock });
    this.sender = new TradeSender({
      accountId: opts.accountId,
      outbox: this.outbox,
      book: () => Promise.resolve(bookOf(opts.broker, opts.clock())),
      figures: () => Promise.resolve(opts.figures()),
      clock: opts.clock,
      diag: opts.diag,
      ...(opts.bookEveryMs !== undefined ? { bookEveryMs: opts.bookEveryMs } : {}),
    });
  }

  /** The ledger a terminal writes through: the operations' events into the outbox first, then the ledger's lines. */
  through(ledger: Ledger): Ledger {
    return {
      append: (accountId, ops) => {
        const added = this.outbox.add(tradeEventsOf(ops));
        ledger.append(accountId, ops);
        if (added > 0) void this.sender.flush();
      },
    };
  }
}
