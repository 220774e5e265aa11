import { entryRefusal } from '../bridge-kit/trade-management';
import type { BridgeCommand } from '../domain/bridge-protocol';
import { FILLED } from './completions';
import { NotSentInTime, OpenApiError } from './connection';
import { PayloadType, TradeSide } from './messages';
import type { TradeCause } from './trade-feed';
import type { Outcome, TradingAccount } from './trading';
import { pipSize } from './units';

/**
 * What trade management checks and does before an entry is placed (protocol 1.6; docs/trade-management.md §5), after
 * the connector's risk checks and in this order: the spread (`maxSpreadPips`, from the spot's bid and ask), the
 * take-profit level prices against the market, then the reverse (`closeOpposite`: every position of the symbol on the
 * other side closed whole with ProtoOAClosePositionReq, one by one). A refusal is the entry's outcome; nothing is
 * placed after it.
 */

const PIP_FIELDS = ['maxSpreadPips', 'trailDistancePips', 'trailTriggerPips', 'trailStepPips', 'breakevenTriggerPips', 'breakevenOffsetPips'] as const;

export async function beforeEntry(
  acct: Pick<TradingAccount, 'symbol' | 'quote' | 'reconcile' | 'call'>,
  cmd: BridgeCommand,
  notAfter: number,
  around: <T>(cause: TradeCause, run: () => Promise<T>) => Promise<T>,
): Promise<Outcome | undefined> {
  const spec = cmd.symbol !== undefined ? acct.symbol(cmd.symbol) : undefined;
  if (!spec) {
    const field = PIP_FIELDS.find((f) => cmd[f] !== undefined) ?? (cmd.takeProfits?.some((l) => l.tpPips !== undefined) ? 'takeProfits' : undefined);
    if (field === undefined) return undefined; // the entry itself is refused for its symbol
    return { status: 'rejected', retcode: 'bridge_invalid_command', message: `${field}: the pip of symbol ${cmd.symbol ?? '(none)'} is not known` };
  }
  const side = cmd.action.startsWith('buy') ? 'buy' : 'sell';
  try {
    if (cmd.maxSpreadPips !== undefined || cmd.takeProfits?.some((l) => l.tp !== undefined)) {
      const refusal = entryRefusal(cmd, side, await acct.quote(spec.symbolId), pipSize(spec));
      if (refusal) return { status: 'rejected', retcode: refusal.reason, message: refusal.message };
    }
    if (cmd.closeOpposite !== true || (cmd.action !== 'buy' && cmd.action !== 'sell')) return undefined;
    return await closeOpposite(acct, cmd, spec.symbolId, side === 'buy' ? TradeSide.SELL : TradeSide.BUY, notAfter, around);
  } catch (err) {
    if (err instanceof OpenApiError) return { status: 'rejected', retcode: err.errorCode, message: err.description || err.errorCode };
    if (err instanceof NotSentInTime) return { status: 'expired', message: `not executed: expired at ${cmd.expiresAt}` };
    throw err;
  }
}

async function closeOpposite(
  acct: Pick<TradingAccount, 'reconcile' | 'call'>,
  cmd: BridgeCommand,
  symbolId: number,
  opposite: number,
  notAfter: number,
  around: <T>(cause: TradeCause, run: () => Promise<T>) => Promise<T>,
): Promise<Outcome | undefined> {
  const { positions } = await acct.reconcile();
  const targets = positions.filter((p) => p.tradeData.symbolId === symbolId && p.tradeData.tradeSide === opposite);
  const closed: string[] = [];
  for (const p of targets) {
    try {
      await around({ kind: 'close_opposite', commandId: cmd.commandId }, () =>
        acct.call(PayloadType.PROTO_OA_CLOSE_POSITION_REQ, { positionId: p.positionId, volume: p.tradeData.volume }, { done: FILLED, notAfter }),
      );
      closed.push(String(p.positionId));
    } catch (err) {
      if (!(err instanceof OpenApiError)) throw err;
      const before = closed.length > 0 ? `closed ${closed.join(', ')}; ` : 'closed none; ';
      return {
        status: 'rejected',
        retcode: 'close_opposite_failed',
        message: `${before}closing ${p.positionId} failed: ${`${err.errorCode} ${err.description}`.trim()}; nothing opened`,
      };
    }
  }
  return undefined;
}
