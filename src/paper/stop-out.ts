import type { Serial } from '../bridge-kit/serial';
import { StopOutWatch } from '../bridge-kit/stop-out-watch';
import type { EquityMarks } from '../risk/equity-marks';
import type { StopOutMark } from '../risk/stop-out';
import { StopOutRunner, type StopOutAccount } from '../risk/stop-out-runner';
import type { PaperBroker } from './broker';
import type { Ledger } from './ledger';
import { equityQuotes } from './risk';
import { isTransientRefusal } from '../risk/transient-refusals';

/**
 * The paper bridge's stop-out (docs/risk-sizing.md, "Stop-out"): equity and the quotes behind it from the paper
 * broker, closes and cancels on it (their operations go to the ledger), the mark in the terminal's state file.
 */

export interface PaperStopOutOptions {
  accountId: string;
  broker: PaperBroker;
  ledger: Ledger;
  marks: EquityMarks;
  saved: StopOutMark | undefined;
  /** Saves the terminal's state file (durably when the mark changed). */
  save: (durable: boolean) => void;
  serial: Serial;
  clock: () => number;
  diag: (line: Record<string, unknown>) => void;
  everyMs?: number;
  afterMark?: () => void;
}

export function paperStopOut(opts: PaperStopOutOptions): StopOutWatch {
  const { broker, ledger, accountId } = opts;
  const tickets = () => ({ positions: broker.positions().map((p) => p.ticket), orders: broker.orders().map((o) => o.ticket) });
  /** Undefined when done; else the refusal, `transient` when the broker said "not now" (tried again by the runner). */
  const run = (command: Parameters<PaperBroker['execute']>[0]) => {
    const { result, ops } = broker.execute(command);
    // No service command asked for these closes: the ledger and the trade events say the stop-out did.
    ledger.append(
      accountId,
      ops.map((op) => (op.cause === 'command' ? { ...op, cause: 'stop_out' as const } : op)),
    );
    if (result.status === 'done') return undefined;
    return {
      result: 'failed' as const,
      message: String(result.message ?? result.retcode),
      ...(isTransientRefusal(result.retcode ?? undefined) ? { transient: true } : {}),
    };
  };
  const account: StopOutAccount = {
    read: () => {
      const { equity, currency } = broker.account();
      const quotes = equityQuotes(broker).map((symbol) => ({ symbol, quotedAtMs: broker.quotedAt(symbol) }));
      return Promise.resolve({ equity, currency, quotes, ...tickets() });
    },
    open: () => Promise.resolve(tickets()),
    close: (ticket) => Promise.resolve({ ticket, ...(run({ action: 'close', positionId: ticket }) ?? { result: 'closed' as const }) }),
    cancel: (ticket) => Promise.resolve({ ticket, ...(run({ action: 'cancel_pending', orderId: ticket }) ?? { result: 'cancelled' as const }) }),
    orderFate: (ticket) => {
      const gone = broker.orderGone(ticket);
      if (!gone) return Promise.resolve({ state: 'unknown', detail: broker.orders().some((o) => o.ticket === ticket) ? 'still pending' : 'not found' });
      if (gone.fate !== 'filled') return Promise.resolve({ state: gone.fate });
      return Promise.resolve({ state: 'filled', ...(gone.position !== undefined ? { position: gone.position } : {}) });
    },
  };
  const storage = { save: () => opts.save(true), saveMarks: () => opts.save(false) };
  const diag = (line: Record<string, unknown>) => opts.diag({ ...line, accountId });
  const runner = new StopOutRunner(account, storage, opts.marks, opts.saved, diag, opts.afterMark);
  return new StopOutWatch({
    accountId,
    runner,
    serial: opts.serial,
    clock: opts.clock,
    diag: opts.diag,
    ...(opts.everyMs !== undefined ? { everyMs: opts.everyMs } : {}),
  });
}
