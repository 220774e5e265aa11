import { PayloadType, type Envelope } from '../../src/ctrader/messages';
import { Refusal, type DoubleAccount, type Executions } from './ctrader-market';

/** The trading requests of Open API: answered by execution events, or refused by ProtoOAOrderErrorEvent. */
export const TRADING = new Set<number>([
  PayloadType.PROTO_OA_NEW_ORDER_REQ,
  PayloadType.PROTO_OA_CANCEL_ORDER_REQ,
  PayloadType.PROTO_OA_AMEND_ORDER_REQ,
  PayloadType.PROTO_OA_AMEND_POSITION_SLTP_REQ,
  PayloadType.PROTO_OA_CLOSE_POSITION_REQ,
]);

/**
 * The answers to one trading request of an authorized account, in order, without clientMsgId: the execution events of
 * what the account did, or the ProtoOAOrderErrorEvent of its refusal (nothing was done).
 */
export function tradingAnswers(account: DoubleAccount, env: Envelope, now: number): Envelope[] {
  const p = env.payload ?? {};
  const ctid = account.ctid;
  let executions: Executions;
  try {
    switch (env.payloadType) {
      case PayloadType.PROTO_OA_NEW_ORDER_REQ:
        executions = account.newOrder(p, now);
        break;
      case PayloadType.PROTO_OA_AMEND_POSITION_SLTP_REQ:
        executions = account.amendPosition(p, now);
        break;
      case PayloadType.PROTO_OA_AMEND_ORDER_REQ:
        executions = account.amendOrder(p, now);
        break;
      case PayloadType.PROTO_OA_CANCEL_ORDER_REQ:
        executions = account.cancelOrder(p, now);
        break;
      default:
        executions = account.closePosition(p, now);
    }
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return [
      {
        payloadType: PayloadType.PROTO_OA_ORDER_ERROR_EVENT,
        payload: { ctidTraderAccountId: ctid, errorCode: err.errorCode, description: err.description, ...err.ids },
      },
    ];
  }
  return executions.map((e) => ({ payloadType: PayloadType.PROTO_OA_EXECUTION_EVENT, payload: { ctidTraderAccountId: ctid, ...e } }));
}
