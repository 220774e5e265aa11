import { ErrorCode, PayloadType, type Envelope } from '../../src/ctrader/messages';
import type { DoubleAssets } from './ctrader-assets';
import type { DoubleAccount } from './ctrader-market';
import type { DoubleSymbol } from './ctrader-symbols';

/**
 * The cTrader Open API double's answers to the requests that only read (symbols, trader, assets, conversion chains,
 * reconcile, order and deal history, one order's details, unrealized P&L), each the response message the published definitions pair with it.
 */
export function answerQuery(symbols: Map<number, DoubleSymbol>, assets: DoubleAssets, account: DoubleAccount, env: Envelope): Envelope {
  const p = env.payload ?? {};
  const ctid = account.ctid;
  const answer = (payloadType: number, payload: Record<string, unknown>): Envelope => ({ payloadType, payload: { ctidTraderAccountId: ctid, ...payload } });
  switch (env.payloadType) {
    case PayloadType.PROTO_OA_SYMBOLS_LIST_REQ:
      return answer(PayloadType.PROTO_OA_SYMBOLS_LIST_RES, { symbol: [...symbols.values()].map((s) => assets.light(s)) });
    case PayloadType.PROTO_OA_SYMBOL_BY_ID_REQ: {
      const ids = (p.symbolId as number[] | undefined) ?? [];
      const symbol = ids
        .map((i) => symbols.get(i))
        .filter((s): s is DoubleSymbol => !!s)
        .map((s) => ({
          symbolId: s.symbolId,
          digits: s.digits,
          pipPosition: s.pipPosition,
          lotSize: s.lotSize,
          minVolume: s.minVolume,
          stepVolume: s.stepVolume,
          maxVolume: s.maxVolume,
        }));
      return answer(PayloadType.PROTO_OA_SYMBOL_BY_ID_RES, { symbol });
    }
    case PayloadType.PROTO_OA_TRADER_REQ:
      return answer(PayloadType.PROTO_OA_TRADER_RES, {
        trader: { ctidTraderAccountId: ctid, balance: account.balance, depositAssetId: assets.idOf(account.depositAsset), moneyDigits: 2 },
      });
    case PayloadType.PROTO_OA_ASSET_LIST_REQ:
      return answer(PayloadType.PROTO_OA_ASSET_LIST_RES, { asset: assets.list() });
    case PayloadType.PROTO_OA_SYMBOLS_FOR_CONVERSION_REQ:
      return answer(PayloadType.PROTO_OA_SYMBOLS_FOR_CONVERSION_RES, {
        symbol: assets.chain(p.firstAssetId as number, p.lastAssetId as number).map((s) => assets.light(s)),
      });
    case PayloadType.PROTO_OA_RECONCILE_REQ:
      return answer(PayloadType.PROTO_OA_RECONCILE_RES, { position: [...account.positions.values()], order: [...account.orders.values()] });
    case PayloadType.PROTO_OA_ORDER_LIST_REQ:
      return answer(PayloadType.PROTO_OA_ORDER_LIST_RES, {
        order: account.orderList((p.fromTimestamp as number | undefined) ?? 0, (p.toTimestamp as number | undefined) ?? 2_147_483_646_000),
        hasMore: false,
      });
    case PayloadType.PROTO_OA_ORDER_DETAILS_REQ: {
      const order = account.history.get(p.orderId as number);
      if (!order)
        return {
          payloadType: PayloadType.PROTO_OA_ERROR_RES,
          payload: { ctidTraderAccountId: ctid, errorCode: ErrorCode.ORDER_NOT_FOUND, description: 'Order not found' },
        };
      return answer(PayloadType.PROTO_OA_ORDER_DETAILS_RES, { order, deal: account.deals.get(order.orderId) ?? [] });
    }
    case PayloadType.PROTO_OA_DEAL_LIST_REQ:
      return answer(
        PayloadType.PROTO_OA_DEAL_LIST_RES,
        dealList(
          account,
          (p.fromTimestamp as number | undefined) ?? 0,
          (p.toTimestamp as number | undefined) ?? 2_147_483_646_000,
          (p.maxRows as number | undefined) ?? 1000,
        ),
      );
    case PayloadType.PROTO_OA_GET_POSITION_UNREALIZED_PNL_REQ:
      return answer(PayloadType.PROTO_OA_GET_POSITION_UNREALIZED_PNL_RES, { positionUnrealizedPnL: account.unrealized(), moneyDigits: 2 });
    default:
      return {
        payloadType: PayloadType.ERROR_RES,
        payload: { errorCode: ErrorCode.UNSUPPORTED_MESSAGE, description: `payloadType ${env.payloadType} is not served by this double` },
      };
  }
}

/** ProtoOADealListReq: deals executed within [from, to], oldest first, at most `maxRows` (then hasMore). */
function dealList(account: DoubleAccount, from: number, to: number, maxRows: number): { deal: Record<string, unknown>[]; hasMore: boolean } {
  const at = (d: Record<string, unknown>) => d.executionTimestamp as number;
  const all = [...account.deals.values()]
    .flat()
    .filter((d) => at(d) >= from && at(d) <= to)
    .sort((a, b) => at(a) - at(b) || (a.dealId as number) - (b.dealId as number));
  return { deal: all.slice(0, maxRows), hasMore: all.length > maxRows };
}
