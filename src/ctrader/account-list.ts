import { OpenApiConnection, type WebSocketFactory } from './connection';
import { PayloadType, type CtidTraderAccount } from './messages';

/** Where the account list (ProtoOAGetAccountListByAccessTokenReq) is asked; Spotware answers it on either host. */
export const CTRADER_ACCOUNT_LIST_URL = 'wss://live.ctraderapi.com:5036';

/**
 * The trading accounts an access token may use (ProtoOAGetAccountListByAccessTokenReq), on a connection of its own
 * that lives for this one question: application auth, the request, close. Spotware answers it on either host; each
 * account says whether it is live (`isLive`), which host the connector must then use for it.
 */
export interface AccountListOptions {
  url: string;
  clientId: string;
  clientSecret: string;
  /** The whole question (connect, application auth, answer) must end within this. */
  timeoutMs: number;
  webSocket?: WebSocketFactory;
}

export async function accountsOfToken(opts: AccountListOptions, accessToken: string): Promise<CtidTraderAccount[]> {
  const connection = new OpenApiConnection({
    url: opts.url,
    clientId: opts.clientId,
    clientSecret: opts.clientSecret,
    requestTimeoutMs: opts.timeoutMs,
    heartbeatMs: Math.max(1_000, Math.min(10_000, opts.timeoutMs)),
    label: 'account-list',
    ...(opts.webSocket ? { webSocket: opts.webSocket } : {}),
  });
  const deadline = Date.now() + opts.timeoutMs;
  connection.start();
  try {
    await connection.whenReady(opts.timeoutMs);
    const answer = await connection.request(
      PayloadType.PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_REQ,
      { accessToken },
      { notAfter: deadline, timeoutMs: Math.max(1, deadline - Date.now()) },
    );
    const list = (answer.payload as { ctidTraderAccount?: CtidTraderAccount[] } | undefined)?.ctidTraderAccount ?? [];
    return list
      .filter((a) => Number.isSafeInteger(a.ctidTraderAccountId) && a.ctidTraderAccountId > 0)
      .slice(0, 100)
      .map((a) => ({
        ctidTraderAccountId: a.ctidTraderAccountId,
        isLive: a.isLive === true,
        ...(typeof a.traderLogin === 'number' ? { traderLogin: a.traderLogin } : {}),
        ...(typeof a.brokerTitleShort === 'string' ? { brokerTitleShort: a.brokerTitleShort.slice(0, 64) } : {}),
      }));
  } finally {
    await connection.stop();
  }
}
