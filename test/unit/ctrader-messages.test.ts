import { DealStatus, ErrorCode, ExecutionType, OrderStatus, OrderType, PayloadType, PositionStatus, TimeInForce, TradeSide } from '../../src/ctrader/messages';
import { checkPayload, loadProto, messageNameOf } from '../helpers/ctrader-proto';

/**
 * src/ctrader/messages.ts against Spotware's published definitions (test/helpers/ctrader-proto.ts):
 * every payload type number, enum value and error code name the connector and its double use is the published one.
 */

const proto = loadProto();
const enumOf = (name: string) => {
  const e = proto.enums.get(name);
  if (!e) throw new Error(`enum ${name} is not in the reference`);
  return e;
};

describe('cTrader Open API constants against the published .proto files', () => {
  test('when each payload type is looked up in ProtoOAPayloadType or ProtoPayloadType, then its number is the published one', () => {
    const oa = enumOf('ProtoOAPayloadType');
    const common = enumOf('ProtoPayloadType');
    for (const [name, n] of Object.entries(PayloadType)) expect({ name, n: oa.get(name) ?? common.get(name) }).toEqual({ name, n });
  });

  test('when each payload type is mapped to its message, then the message exists in the reference', () => {
    for (const [name, n] of Object.entries(PayloadType)) expect({ name, message: messageNameOf(n) !== undefined }).toEqual({ name, message: true });
    expect(messageNameOf(PayloadType.PROTO_OA_NEW_ORDER_REQ)).toBe('ProtoOANewOrderReq');
    expect(messageNameOf(PayloadType.HEARTBEAT_EVENT)).toBe('ProtoHeartbeatEvent');
    expect(messageNameOf(PayloadType.ERROR_RES)).toBe('ProtoErrorRes');
  });

  test('when the enums are compared, then trade side, order type, time in force, statuses and execution types are the published values', () => {
    const check = (ours: Record<string, number>, published: string) => {
      const e = enumOf(published);
      for (const [name, n] of Object.entries(ours)) expect({ published, name, n: e.get(name) }).toEqual({ published, name, n });
    };
    check(TradeSide, 'ProtoOATradeSide');
    check(OrderType, 'ProtoOAOrderType');
    check(TimeInForce, 'ProtoOATimeInForce');
    check(PositionStatus, 'ProtoOAPositionStatus');
    check(OrderStatus, 'ProtoOAOrderStatus');
    check(ExecutionType, 'ProtoOAExecutionType');
    check(DealStatus, 'ProtoOADealStatus');
  });

  test('when each error code name is looked up, then it is a ProtoErrorCode or ProtoOAErrorCode name', () => {
    const names = new Set([...enumOf('ProtoErrorCode').keys(), ...enumOf('ProtoOAErrorCode').keys()]);
    for (const name of Object.values(ErrorCode)) expect({ name, published: names.has(name) }).toEqual({ name, published: true });
  });

  test('when a payload has a field its message does not define, or lacks a required one, then the check names it', () => {
    expect(checkPayload(PayloadType.PROTO_OA_CLOSE_POSITION_REQ, { ctidTraderAccountId: 1, positionId: 2, volume: 100 })).toBeUndefined();
    expect(checkPayload(PayloadType.PROTO_OA_CLOSE_POSITION_REQ, { ctidTraderAccountId: 1, positionId: 2 })).toBe('ProtoOAClosePositionReq.volume is required');
    expect(checkPayload(PayloadType.PROTO_OA_NEW_ORDER_REQ, { ctidTraderAccountId: 1, symbolId: 1, orderType: 1, tradeSide: 1, volume: 1, lots: 1 })).toBe(
      'ProtoOANewOrderReq has no field lots',
    );
    expect(checkPayload(PayloadType.PROTO_OA_RECONCILE_RES, { ctidTraderAccountId: 1, position: [{ positionId: 1 }] })).toBe(
      'ProtoOAPosition.tradeData is required',
    );
  });
});
