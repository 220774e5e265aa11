import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CtraderAccount } from '../../src/ctrader/account';
import { OpenApiError, refusalOf, type OpenApiConnection } from '../../src/ctrader/connection';
import { MarksFile } from '../../src/ctrader/marks-file';
import { PayloadType, type Envelope } from '../../src/ctrader/messages';
import type { MarksKeeper } from '../../src/ctrader/risk';
import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import { CtraderDouble } from './ctrader-double';
import { checkPayload } from './ctrader-proto';

/**
 * A real CtraderAccount whose Open API connection is the double's broker side in-process (no socket): every request is
 * checked against the published definitions, every figure (trader, unrealized P&L, assets, conversion chain, spots)
 * is the double's answer. What the connector's risk and stop-out unit tests run on.
 */

export const CTID = 5151;

/** What CtraderAccount needs of a connection, answered by the double (no socket); spots on subscription. */
function inProcess(
  double: CtraderDouble,
  failing: Set<number>,
  refusing: Map<number, string[]>,
  listeners: ((env: Envelope) => void)[],
  sent: Envelope[],
  before: Map<number, () => void>,
): OpenApiConnection {
  const request = async (payloadType: number, payload: Record<string, unknown>): Promise<Envelope> => {
    sent.push({ payloadType, payload });
    // What the market does just before the broker takes the request (once).
    const first = before.get(payloadType);
    before.delete(payloadType);
    first?.();
    const invalid = checkPayload(payloadType, payload);
    if (invalid) throw new Error(`invalid request ${payloadType}: ${invalid}`);
    if (failing.has(payloadType)) throw new OpenApiError('UNKNOWN_ERROR', 'the server could not answer this request now', PayloadType.PROTO_OA_ERROR_RES);
    // ProtoOAErrorRes with the next ErrorCode queued for this payload type (nothing executed), as the server refuses.
    const refusal = refusing.get(payloadType)?.shift();
    if (refusal !== undefined) throw new OpenApiError(refusal, 'refused by the double', PayloadType.PROTO_OA_ERROR_RES);
    if (payloadType === PayloadType.PROTO_OA_ACCOUNT_AUTH_REQ)
      return { payloadType: PayloadType.PROTO_OA_ACCOUNT_AUTH_RES, payload: { ctidTraderAccountId: CTID } };
    if (payloadType === PayloadType.PROTO_OA_SUBSCRIBE_SPOTS_REQ) {
      setImmediate(() => {
        for (const id of payload.symbolId as number[]) {
          if (!failing.has(PayloadType.PROTO_OA_SPOT_EVENT)) spotOf(double, id, listeners);
        }
      });
      return { payloadType: PayloadType.PROTO_OA_SUBSCRIBE_SPOTS_RES, payload: { ctidTraderAccountId: CTID } };
    }
    const [answer] = double.answer(double.account(CTID), { payloadType, payload });
    // As the connection does: an answer that refuses (ProtoOAErrorRes, ProtoOAOrderErrorEvent) rejects the request.
    const refused = refusalOf(answer!);
    if (refused) throw refused;
    return answer!;
  };
  const fake = {
    onReady: () => undefined,
    onEvent: (l: (env: Envelope) => void) => listeners.push(l),
    onExecution: () => undefined,
    whenReady: async () => undefined,
    sendDuringSetup: request,
    request,
  };
  return fake as unknown as OpenApiConnection;
}

/** The double's current price of a symbol as a spot event to the account's listeners (no time: Open API sends none). */
function spotOf(double: CtraderDouble, symbolId: number, listeners: ((env: Envelope) => void)[]): void {
  const s = double.symbols.get(symbolId);
  if (!s) return;
  const spot = { ctidTraderAccountId: CTID, symbolId, bid: Math.round(s.bid * 100_000), ask: Math.round(s.ask * 100_000) };
  for (const l of listeners) l({ payloadType: PayloadType.PROTO_OA_SPOT_EVENT, payload: spot });
}

export async function harness(depositAsset = 'USD') {
  const double = CtraderDouble.create({ clientId: 'c', clientSecret: 's', accounts: [{ ctid: CTID, accessToken: 'a', refreshToken: 'r', depositAsset }] });
  const failing = new Set<number>();
  const refusing = new Map<number, string[]>();
  const listeners: ((env: Envelope) => void)[] = [];
  /** Run once just before the double takes the next request of a payload type (e.g. an order fills before its cancel). */
  const before = new Map<number, () => void>();
  /** Every request the account sent, in order. */
  const sent: Envelope[] = [];
  const account = new CtraderAccount({
    credential: { accountId: 'acc-r', ctidTraderAccountId: CTID, environment: 'demo', bridgeToken: 'b'.repeat(32), accessToken: 'a', refreshToken: 'r' },
    connection: inProcess(double, failing, refusing, listeners, sent, before),
  });
  await account.loadSymbols();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-risk-'));
  const file = new MarksFile(path.join(dir, 'acc-r.marks.json'));
  const keeperFrom = (f: MarksFile): MarksKeeper => {
    const marks = f.load();
    return { marks, save: () => f.save(marks) };
  };
  let seq = 0;
  const command = (fields: Partial<BridgeCommand>): BridgeCommand => ({
    commandId: `signal/sig_${++seq}/account/acc-r`,
    seq,
    signalId: `sig_${seq}`,
    accountId: 'acc-r',
    action: 'buy',
    acceptedAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
    ...fields,
  });
  const open = (symbolId: number, side: number, volume: number) =>
    double.account(CTID).newOrder({ symbolId, tradeSide: side, volume, orderType: 1 }, Date.now());
  const spot = (symbolId: number) => spotOf(double, symbolId, listeners);
  const requests = (payloadType: number) => sent.filter((e) => e.payloadType === payloadType).map((e) => e.payload ?? {});
  return { double, failing, refusing, before, account, file, dir, keeper: keeperFrom(file), keeperFrom, command, open, spot, requests };
}
