import type { CommandOutcome } from '../bridge-kit/client';
import { isOpening } from '../domain/actions';
import type { BridgeCommand } from '../domain/bridge-protocol';
import { checkLossGuards, sizeEntry } from '../risk/entry-risk';
import type { EquityMarks } from '../risk/equity-marks';
import { staleFigures } from '../risk/figures-age';
import { tickValueOf } from '../risk/sizing';
import type { CtraderAccount } from './account';
import { FiguresUnavailable, quoteToDeposit, readAccount, within, type FiguresAccount, type LiveAccount } from './figures';
import { pipSize, volumeToLots, type SymbolSpec } from './units';

/**
 * An entry's `lossGuards` and `riskSizing` on the live cTrader account (docs/risk-sizing.md), with the same guard and
 * formula code as the paper bridge (src/risk/entry-risk.ts, src/risk/sizing.ts). Run just before the order is
 * sent, one command at a time, so the second of two racing entries sees the account the first left. Fails closed:
 * figures that cannot be read now refuse the entry (`risk_figures_unavailable`); nothing is sized on a guess, nor on
 * a spot that reached the connector longer ago than the command's `figuresMaxAgeMs` (`risk_figures_stale`: the entry's
 * symbol and the conversion chain's; equity is the server's own P&L, priced by the server).
 */

export type RiskAccount = FiguresAccount & Pick<CtraderAccount, 'symbol' | 'symbolById' | 'quoteReceivedAt'>;

/** How long the figures of one entry may take to read, all requests together (and never past its expiresAt). */
const FIGURES_TIMEOUT_MS = 5_000;

export interface MarksKeeper {
  marks: EquityMarks;
  /** Saves the marks to disk; called after every reading, before the entry goes on. */
  save(): void;
}

export async function applyRisk(
  acct: RiskAccount,
  cmd: BridgeCommand,
  keeper: MarksKeeper,
  notAfter: number,
): Promise<{ command: BridgeCommand; note?: string } | { refusal: CommandOutcome }> {
  if (!isOpening(cmd.action) || (!cmd.riskSizing && !cmd.lossGuards)) return { command: cmd };
  const refuse = (retcode: string, message: string) => ({ refusal: { status: 'rejected' as const, retcode, message } });
  const until = Math.min(Date.now() + FIGURES_TIMEOUT_MS, notAfter);
  const left = () => until - Date.now();
  if (left() <= 0) return { refusal: { status: 'expired', message: `not executed: expired at ${cmd.expiresAt}` } };
  try {
    const account = await readAccount(acct, { timeoutMs: left() });
    if (cmd.lossGuards) {
      const tripped = checkLossGuards(cmd.lossGuards, keeper.marks, account, Date.now());
      keeper.save();
      if (tripped) return refuse(tripped.retcode, tripped.message);
    }
    const sizing = cmd.riskSizing;
    if (!sizing) return { command: cmd };
    const spec = cmd.symbol === undefined ? undefined : acct.symbol(cmd.symbol);
    if (!spec) return refuse('risk_volume_unsizable', `no symbol ${cmd.symbol ?? ''} on the account to size the entry with`);
    if (spec.quoteAssetId === undefined) return refuse('risk_volume_unsizable', `the broker did not say which currency ${spec.name} is quoted in`);
    const quote = await within(left(), `the price of ${spec.name}`, () => acct.quote(spec.symbolId, left()));
    const priced = [spec.symbolId];
    const rate = await quoteToDeposit(acct, spec.quoteAssetId, account.depositAssetId, left(), (id) => priced.push(id));
    const quoteTimes = priced.map((id) => ({ symbol: acct.symbolById(id)?.name ?? `symbol ${id}`, quotedAtMs: acct.quoteReceivedAt(id) }));
    const stale = staleFigures(quoteTimes, cmd.figuresMaxAgeMs, Date.now());
    if (stale) return refuse(stale.retcode, stale.message);
    if (rate === undefined) return refuse('risk_volume_unsizable', `no conversion from the quote currency of ${spec.name} to ${account.currency}`);
    const sized = size(cmd, sizing, account, spec, quote, rate);
    if ('refusal' in sized) return refuse(sized.refusal.retcode, sized.refusal.message);
    const { riskSizing: _sizing, ...rest } = cmd;
    return { command: { ...rest, volume: sized.lots }, note: sized.note };
  } catch (err) {
    if (!(err instanceof FiguresUnavailable)) throw err;
    return refuse('risk_figures_unavailable', `${err.message}; the entry was not placed rather than sized or guarded on a guess`);
  }
}

/** The formula's inputs from Open API's units: a tick is 10^−digits; a lot is lotSize cents of units. */
function size(
  cmd: BridgeCommand,
  sizing: NonNullable<BridgeCommand['riskSizing']>,
  account: LiveAccount,
  spec: SymbolSpec,
  quote: { bid: number; ask: number },
  quoteToDepositRate: number,
) {
  const entry = cmd.price ?? (cmd.action.startsWith('buy') ? quote.ask : quote.bid);
  const stopDistance = cmd.sl !== undefined ? Math.abs(entry - cmd.sl) : cmd.slPips !== undefined ? cmd.slPips * pipSize(spec) : Number.NaN;
  const tickSize = 10 ** -spec.digits;
  const contractSize = spec.lotSize / 100;
  return sizeEntry({
    sizing,
    account,
    stopDistance,
    digits: spec.digits,
    instrument: {
      tickSize,
      tickValue: tickValueOf(tickSize, contractSize, quoteToDepositRate),
      volumeMin: volumeToLots(spec.minVolume, spec),
      volumeStep: volumeToLots(spec.stepVolume, spec),
      volumeMax: volumeToLots(Math.min(spec.maxVolume, Number.MAX_SAFE_INTEGER), spec),
    },
  });
}
