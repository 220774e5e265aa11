import { isOpening } from '../domain/actions';
import type { BridgeCommand } from '../domain/bridge-protocol';
import { checkLossGuards, sizeEntry } from '../risk/entry-risk';
import type { EquityMarks } from '../risk/equity-marks';
import { staleFigures } from '../risk/figures-age';
import { tickValueOf } from '../risk/sizing';
import type { ExecutionResult, PaperBroker } from './broker';

/**
 * What a bridge does with an entry's `riskSizing` and `lossGuards` (docs/risk-sizing.md), on the live account, at the
 * instant of execution and one command at a time: so two entries racing each other cannot both pass a guard that only
 * one fits under (the second sees the account the first left). The prices the figures rest on are at most the
 * command's `figuresMaxAgeMs` old, or the entry is refused `risk_figures_stale`.
 */

export { EquityMarks } from '../risk/equity-marks';

type Refusal = Pick<ExecutionResult, 'status' | 'retcode' | 'message'> & { status: 'rejected' };

/** The command to place (with its lots when sized by risk, and why), or the refusal to report. */
export function applyRisk(
  command: BridgeCommand,
  broker: PaperBroker,
  marks: EquityMarks,
  nowMs: number,
): { command: BridgeCommand; note?: string } | { refusal: Refusal } {
  if (!isOpening(command.action) || (!command.riskSizing && !command.lossGuards)) return { command };
  const account = broker.account();
  const refuse = (retcode: string, message: string) => ({ refusal: { status: 'rejected' as const, retcode, message } });

  const stale = staleFigures(
    quotesBehind(command, broker).map((symbol) => ({ symbol, quotedAtMs: broker.quotedAt(symbol) })),
    command.figuresMaxAgeMs,
    nowMs,
  );
  if (stale) return refuse(stale.retcode, stale.message);

  if (command.lossGuards) {
    const tripped = checkLossGuards(command.lossGuards, marks, account, nowMs);
    if (tripped) return refuse(tripped.retcode, tripped.message);
  }

  const sizing = command.riskSizing;
  if (!sizing) return { command };
  const spec = command.symbol === undefined ? undefined : broker.resolveSymbol(command.symbol);
  const quote = spec ? broker.quote(spec.name) : undefined;
  if (!spec || !quote) return refuse('risk_volume_unsizable', `no price for ${command.symbol ?? 'the symbol'} to size the entry with`);
  const entry = command.price ?? (command.action.startsWith('buy') ? quote.ask : quote.bid);
  const stopDistance = command.sl !== undefined ? Math.abs(entry - command.sl) : command.slPips !== undefined ? command.slPips * spec.pip : Number.NaN;
  const tickSize = 10 ** -spec.digits;
  let tickValue: number;
  try {
    tickValue = tickValueOf(tickSize, spec.contractSize, broker.valueInAccount(1, spec.quoteCurrency));
  } catch {
    return refuse('risk_volume_unsizable', `no rate from ${spec.quoteCurrency} to ${account.currency} to size the entry with`);
  }
  const sized = sizeEntry({
    sizing,
    account,
    stopDistance,
    digits: spec.digits,
    instrument: { tickSize, tickValue, volumeMin: spec.minVolume, volumeStep: spec.volumeStep, volumeMax: spec.maxVolume },
  });
  if ('refusal' in sized) return refuse(sized.refusal.retcode, sized.refusal.message);
  const { riskSizing: _sizing, ...rest } = command;
  return { command: { ...rest, volume: sized.lots }, note: sized.note };
}

/** The symbols whose quotes the entry's figures rest on: its own and its conversion when sized; the positions' when equity counts. */
function quotesBehind(command: BridgeCommand, broker: PaperBroker): string[] {
  const symbols = new Set<string>();
  const withConversion = (symbol: string) => {
    const spec = broker.resolveSymbol(symbol);
    if (!spec) return;
    symbols.add(spec.name);
    const conversion = broker.conversionSymbol(spec.quoteCurrency);
    if (conversion) symbols.add(conversion);
  };
  if (command.riskSizing && command.symbol !== undefined) withConversion(command.symbol);
  if (command.lossGuards || command.riskSizing?.basis === 'equity_percent') for (const s of equityQuotes(broker)) symbols.add(s);
  return [...symbols];
}

/** The symbols whose quotes the account's equity rests on: every open position's, and its conversion. */
export function equityQuotes(broker: PaperBroker): string[] {
  const symbols = new Set<string>();
  for (const p of broker.positions()) {
    const spec = broker.resolveSymbol(p.canonical);
    if (!spec) continue;
    symbols.add(spec.name);
    const conversion = broker.conversionSymbol(spec.quoteCurrency);
    if (conversion) symbols.add(conversion);
  }
  return [...symbols];
}
