import { randomBytes } from 'node:crypto';
import { ErrorCode, PayloadType, type Envelope } from '../../src/ctrader/messages';
import { checkPayload } from './ctrader-proto';
import { DoubleAssets } from './ctrader-assets';
import { cancelByHand, closeByHand, expireDue, expirePending, fillPending, marketMoved, stopOutByBroker } from './ctrader-pending';
import { answerQuery } from './ctrader-queries';
import { DoubleAccount, type Executions } from './ctrader-market';
import { TRADING, tradingAnswers } from './ctrader-trading-answers';
import type { DoubleAccountSpec, DoubleOptions } from './ctrader-double-options';
import { DEFAULT_SYMBOLS, type DoubleSymbol } from './ctrader-symbols';
import { startWsServer, type WsPeer, type WsServer } from './websocket-server';

/**
 * A cTrader Open API proxy double speaking the JSON form (`{clientMsgId, payloadType, payload}` over WebSocket, as on
 * port 5036), built from Spotware's published definitions (test/helpers/ctrader-proto.ts: a pinned registry
 * package): payload type numbers, field names, enums and error code names come from src/ctrader/messages.ts, which a
 * unit test checks against those definitions. Answers carry the request's clientMsgId; refusals of trading requests are
 * ProtoOAOrderErrorEvent, refusals of everything else ProtoOAErrorRes; executions are ProtoOAExecutionEvent.
 * Like the proxy, it allows 50 requests per second per connection (then BLOCKED_PAYLOAD_TYPE).
 */

export type { DoubleAccountSpec, DoubleOptions } from './ctrader-double-options';

interface Grant {
  accessToken: string;
  refreshToken: string;
  expired: boolean;
}

interface Conn {
  peer: WsPeer;
  appAuthed: boolean;
  accounts: Set<number>;
  /** ctid → subscribed symbolIds (ProtoOASubscribeSpotsReq) */
  spots: Map<number, Set<number>>;
  /** ctids whose subscription asked for the spot's time (ProtoOASubscribeSpotsReq.subscribeToSpotTimestamp). */
  spotTimestamps: Set<number>;
  received: number[];
}

export class CtraderDouble {
  readonly accounts = new Map<number, DoubleAccount>();
  readonly symbols: Map<number, DoubleSymbol>;
  /** Every message a client sent, in order (heartbeats included). */
  readonly received: Envelope[] = [];
  private readonly grants = new Map<number, Grant>();
  /** ProtoOACtidTraderAccount of each account (what the account list shows). */
  private readonly listed = new Map<number, { isLive: boolean; traderLogin: number; brokerTitleShort: string }>();
  private readonly conns = new Set<Conn>();
  private server!: WsServer;
  private loseAnswer = new Map<number, number>();
  /** Payload types answered with ProtoOAErrorRes while listed (failRequests). */
  private failing = new Set<number>();
  /** The assets (ProtoOAAsset): every symbol's base and quote and every account's deposit currency. */
  readonly assets: DoubleAssets;
  /** Requests of clients that broke the published definitions (unknown or missing fields). */
  readonly violations: string[] = [];
  /** The most requests any connection sent within one second. */
  maxPerSecond = 0;
  /** Requests refused with BLOCKED_PAYLOAD_TYPE. */
  blocked = 0;
  /** The envelopes of `received` that were refused by the rate limit (they did nothing; a client may send them again). */
  readonly rateLimited = new WeakSet<Envelope>();
  limitPerSecond = 50;
  connections = 0;

  private constructor(
    readonly clientId: string,
    readonly clientSecret: string,
    specs: DoubleAccountSpec[],
    symbols: DoubleSymbol[],
  ) {
    this.symbols = new Map(symbols.map((s) => [s.symbolId, { ...s }]));
    this.assets = new DoubleAssets(
      this.symbols,
      specs.map((a) => a.depositAsset ?? 'USD'),
    );
    for (const a of specs) {
      this.accounts.set(a.ctid, new DoubleAccount(a.ctid, this.symbols, a.balance, undefined, a.depositAsset));
      this.grants.set(a.ctid, { accessToken: a.accessToken, refreshToken: a.refreshToken, expired: false });
      this.listed.set(a.ctid, {
        isLive: a.isLive ?? false,
        traderLogin: a.traderLogin ?? a.ctid + 1_000_000,
        brokerTitleShort: a.brokerTitleShort ?? 'Double Broker',
      });
    }
  }

  /** The broker side without a server: `answer()` only (unit tests of the message mapping). */
  static create(opts: DoubleOptions): CtraderDouble {
    const d = new CtraderDouble(opts.clientId, opts.clientSecret, opts.accounts, opts.symbols ?? DEFAULT_SYMBOLS);
    d.limitPerSecond = opts.limitPerSecond ?? 50;
    return d;
  }

  static async start(opts: DoubleOptions): Promise<CtraderDouble> {
    const d = CtraderDouble.create(opts);
    d.server = await startWsServer((peer) => d.accept(peer));
    // Like the proxy, a ProtoHeartbeatEvent now and then, so a quiet connection is known to be alive.
    d.heartbeat = setInterval(() => {
      for (const c of d.conns) d.send(c, PayloadType.HEARTBEAT_EVENT, {});
    }, opts.heartbeatMs ?? 5_000);
    d.heartbeat.unref();
    // The server's clock: GTD orders expire when their time comes, whether or not a quote moves.
    d.expiry = setInterval(() => {
      for (const account of d.accounts.values()) d.push(account.ctid, expireDue(account));
    }, 200);
    d.expiry.unref();
    return d;
  }

  private heartbeat: NodeJS.Timeout | undefined;
  private expiry: NodeJS.Timeout | undefined;

  get url(): string {
    return this.server.url;
  }

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.expiry) clearInterval(this.expiry);
    for (const c of this.conns) c.peer.destroy();
    await this.server.close();
  }

  // ---- fault and market hooks for tests -----------------------------------------------------------------------

  /** The next `times` requests of this payload type are carried out, then the connection drops before any answer. */
  loseAnswerTo(payloadType: number, times = 1): void {
    this.loseAnswer.set(payloadType, (this.loseAnswer.get(payloadType) ?? 0) + times);
  }

  /** Requests of this payload type are refused (ProtoOAErrorRes UNKNOWN_ERROR) until `stopFailing`. */
  failRequests(payloadType: number): void {
    this.failing.add(payloadType);
  }

  stopFailing(payloadType: number): void {
    this.failing.delete(payloadType);
  }

  /** On the next trading request: `crash` runs (it kills the client) before, or after, the broker carries it out. */
  crashOnTrade: { phase: 'before' | 'after'; crash: () => void } | undefined;

  /** Drops every client connection without a close frame. */
  dropConnections(): void {
    for (const c of this.conns) c.peer.destroy();
  }

  /** The account's access token stops working (OA_AUTH_TOKEN_EXPIRED) and its sessions end, as when it expires. */
  expireAccessToken(ctid: number): void {
    this.grants.get(ctid)!.expired = true;
    for (const c of this.conns) {
      c.accounts.delete(ctid);
      c.spots.delete(ctid);
    }
  }

  /** The trader granted access again (cTrader's authorisation page, then the token endpoint): these tokens now work. */
  grant(ctids: readonly number[], tokens: { accessToken: string; refreshToken: string }): void {
    for (const ctid of ctids) this.grants.set(ctid, { ...tokens, expired: false });
  }

  /** The trader revoked our access: both tokens stop working and the account's sessions end with the event. */
  revoke(ctid: number): void {
    Object.assign(this.grants.get(ctid)!, {
      accessToken: `revoked_${randomBytes(8).toString('hex')}`,
      refreshToken: `revoked_${randomBytes(8).toString('hex')}`,
    });
    for (const c of this.conns) {
      if (!c.accounts.delete(ctid)) continue;
      c.spots.delete(ctid);
      this.send(c, PayloadType.PROTO_OA_ACCOUNTS_TOKEN_INVALIDATED_EVENT, { ctidTraderAccountIds: [ctid], reason: 'Access was revoked' });
    }
  }

  currentTokens(ctid: number): { accessToken: string; refreshToken: string } {
    const g = this.grants.get(ctid)!;
    return { accessToken: g.accessToken, refreshToken: g.refreshToken };
  }

  /** The market moves: subscribers get the spot, then every account's SL/TP and pending orders are checked against it. */
  setQuote(symbolName: string, bid: number, ask: number): void {
    const s = [...this.symbols.values()].find((x) => x.symbolName === symbolName)!;
    Object.assign(s, { bid, ask });
    for (const c of this.conns) for (const [ctid, ids] of c.spots) if (ids.has(s.symbolId)) this.spot(c, ctid, s);
    for (const account of this.accounts.values()) this.push(account.ctid, marketMoved(account, s));
  }

  /** The trader closes a position by hand in cTrader (all of it, or `volume` cents of units). */
  closeByHand(ctid: number, positionId: number, volume?: number): void {
    this.push(ctid, closeByHand(this.account(ctid), positionId, volume));
  }

  /** The trader cancels a pending order by hand in cTrader. */
  cancelByHand(ctid: number, orderId: number): void {
    this.push(ctid, cancelByHand(this.account(ctid), orderId));
  }

  /** The broker's own stop-out closes a position. */
  stopOutByBroker(ctid: number, positionId: number): void {
    this.push(ctid, stopOutByBroker(this.account(ctid), positionId));
  }

  /** ProtoOASpotEvent: bid and ask in 1/100000 of a price unit; `timestamp` only when the subscription asked for it. */
  private spot(conn: Conn, ctid: number, s: DoubleSymbol): void {
    this.send(conn, PayloadType.PROTO_OA_SPOT_EVENT, {
      ctidTraderAccountId: ctid,
      symbolId: s.symbolId,
      bid: Math.round(s.bid * 100_000),
      ask: Math.round(s.ask * 100_000),
      ...(conn.spotTimestamps.has(ctid) ? { timestamp: Date.now() } : {}),
    });
  }

  /** The market fills a pending order, or it expires: the account's sessions get the ProtoOAExecutionEvent. */
  fillOrder(ctid: number, orderId: number): void {
    this.push(ctid, fillPending(this.account(ctid), orderId));
  }

  expireOrder(ctid: number, orderId: number): void {
    this.push(ctid, expirePending(this.account(ctid), orderId));
  }

  private push(ctid: number, executions: Executions): void {
    for (const c of this.conns)
      if (c.accounts.has(ctid)) for (const e of executions) this.send(c, PayloadType.PROTO_OA_EXECUTION_EVENT, { ctidTraderAccountId: ctid, ...e });
  }

  setMarketOpen(symbolName: string, open: boolean): void {
    const s = [...this.symbols.values()].find((x) => x.symbolName === symbolName)!;
    s.open = open;
  }

  account(ctid: number): DoubleAccount {
    return this.accounts.get(ctid)!;
  }

  /** Requests of a payload type the clients sent, with their payloads. */
  requests(payloadType: number): Record<string, unknown>[] {
    return this.received.filter((e) => e.payloadType === payloadType).map((e) => e.payload ?? {});
  }

  // ---- the protocol -------------------------------------------------------------------------------------------

  private accept(peer: WsPeer): void {
    const conn: Conn = { peer, appAuthed: false, accounts: new Set(), spots: new Map(), spotTimestamps: new Set(), received: [] };
    this.conns.add(conn);
    this.connections++;
    peer.onClose = () => this.conns.delete(conn);
    peer.onText = (text) => this.onMessage(conn, text);
  }

  /** Violations of the published definitions by the double's own answers; a test asserts there are none. */
  readonly selfViolations: string[] = [];

  private send(conn: Conn, payloadType: number, payload: Record<string, unknown>, clientMsgId?: string): void {
    const why = checkPayload(payloadType, JSON.parse(JSON.stringify(payload)) as Record<string, unknown>);
    if (why) this.selfViolations.push(why);
    conn.peer.sendText(JSON.stringify({ ...(clientMsgId ? { clientMsgId } : {}), payloadType, payload }));
  }

  private error(conn: Conn, clientMsgId: string | undefined, errorCode: string, description: string, ctid?: number, extra: Record<string, unknown> = {}): void {
    this.send(conn, PayloadType.PROTO_OA_ERROR_RES, { ...(ctid ? { ctidTraderAccountId: ctid } : {}), errorCode, description, ...extra }, clientMsgId);
  }

  private onMessage(conn: Conn, text: string): void {
    let env: Envelope;
    try {
      env = JSON.parse(text) as Envelope;
    } catch {
      this.send(conn, PayloadType.ERROR_RES, { errorCode: 'INVALID_REQUEST', description: 'not JSON' });
      return;
    }
    this.received.push(env);
    const now = Date.now();
    conn.received.push(now);
    while (conn.received.length > 0 && conn.received[0]! <= now - 1000) conn.received.shift();
    this.maxPerSecond = Math.max(this.maxPerSecond, conn.received.length);
    const id = env.clientMsgId;
    if (env.payloadType === PayloadType.HEARTBEAT_EVENT) return;
    const invalid =
      typeof env.payloadType === 'number' && env.payload && typeof env.payload === 'object'
        ? checkPayload(env.payloadType, env.payload)
        : 'payloadType and payload are required';
    if (invalid) {
      this.violations.push(invalid);
      return this.error(conn, id, ErrorCode.INVALID_REQUEST, invalid);
    }
    if (conn.received.length > this.limitPerSecond) {
      this.blocked++;
      this.rateLimited.add(env);
      this.error(conn, id, ErrorCode.BLOCKED_PAYLOAD_TYPE, `rate limit of ${this.limitPerSecond} requests per second reached`, undefined, { retryAfter: 1 });
      return;
    }
    const p = env.payload ?? {};
    if (env.payloadType === PayloadType.PROTO_OA_APPLICATION_AUTH_REQ) {
      if (conn.appAuthed) return this.error(conn, id, ErrorCode.CH_CLIENT_ALREADY_AUTHENTICATED, 'Client is already authenticated');
      if (p.clientId !== this.clientId || p.clientSecret !== this.clientSecret)
        return this.error(conn, id, ErrorCode.CH_CLIENT_AUTH_FAILURE, 'Open API client is not activated or wrong client credentials');
      conn.appAuthed = true;
      return this.send(conn, PayloadType.PROTO_OA_APPLICATION_AUTH_RES, {}, id);
    }
    if (!conn.appAuthed) return this.error(conn, id, ErrorCode.CH_CLIENT_NOT_AUTHENTICATED, 'Application is not authenticated');
    if (env.payloadType === PayloadType.PROTO_OA_REFRESH_TOKEN_REQ) return this.refresh(conn, id, p);
    if (env.payloadType === PayloadType.PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_REQ) return this.accountList(conn, id, p);
    const ctid = p.ctidTraderAccountId as number;
    const grant = this.grants.get(ctid);
    if (env.payloadType === PayloadType.PROTO_OA_ACCOUNT_AUTH_REQ) {
      if (!grant) return this.error(conn, id, ErrorCode.CH_CTID_TRADER_ACCOUNT_NOT_FOUND, 'Trading account is not found');
      if (p.accessToken !== grant.accessToken) return this.error(conn, id, ErrorCode.CH_ACCESS_TOKEN_INVALID, 'Access token is invalid', ctid);
      if (grant.expired) return this.error(conn, id, ErrorCode.OA_AUTH_TOKEN_EXPIRED, 'Access token is expired', ctid);
      if (conn.accounts.has(ctid)) return this.error(conn, id, ErrorCode.ALREADY_LOGGED_IN, 'Account is already authorized', ctid);
      conn.accounts.add(ctid);
      return this.send(conn, PayloadType.PROTO_OA_ACCOUNT_AUTH_RES, { ctidTraderAccountId: ctid }, id);
    }
    if (!grant || !conn.accounts.has(ctid)) return this.error(conn, id, ErrorCode.ACCOUNT_NOT_AUTHORIZED, 'Account is not authorized', ctid);
    const account = this.accounts.get(ctid)!;
    if (env.payloadType === PayloadType.PROTO_OA_SUBSCRIBE_SPOTS_REQ) return this.subscribe(conn, env, account);
    const crash = TRADING.has(env.payloadType) ? this.crashOnTrade : undefined;
    if (crash) {
      // The conformance suite's crash points: the client dies before the broker acts, or after, before any answer.
      this.crashOnTrade = undefined;
      if (crash.phase === 'after') this.answer(account, env);
      crash.crash();
      conn.peer.destroy();
      return;
    }
    if (this.failing.has(env.payloadType)) return this.error(conn, id, 'UNKNOWN_ERROR', 'the server could not answer this request now', ctid);
    const answers = this.answer(account, env);
    if (this.takeLoss(env.payloadType)) {
      conn.peer.destroy();
      return;
    }
    for (const a of answers) this.send(conn, a.payloadType, a.payload ?? {}, id);
  }

  private subscribe(conn: Conn, env: Envelope, account: DoubleAccount): void {
    const ctid = account.ctid;
    const ids = (((env.payload ?? {}).symbolId as number[] | undefined) ?? []).filter((i) => this.symbols.has(i));
    const mine = conn.spots.get(ctid) ?? new Set<number>();
    conn.spots.set(ctid, mine);
    if (ids.some((i) => mine.has(i))) return this.error(conn, env.clientMsgId, ErrorCode.ALREADY_SUBSCRIBED, 'Already subscribed', ctid);
    for (const i of ids) mine.add(i);
    if ((env.payload ?? {}).subscribeToSpotTimestamp === true) conn.spotTimestamps.add(ctid);
    this.send(conn, PayloadType.PROTO_OA_SUBSCRIBE_SPOTS_RES, { ctidTraderAccountId: ctid }, env.clientMsgId);
    for (const i of ids) this.spot(conn, ctid, this.symbols.get(i)!);
  }

  /** ProtoOAGetAccountListByAccessTokenRes: every account the token was granted for (an empty list is possible). */
  private accountList(conn: Conn, id: string | undefined, p: Record<string, unknown>): void {
    const ctids = [...this.grants.entries()].filter(([, g]) => g.accessToken === p.accessToken).map(([ctid]) => ctid);
    if (ctids.length === 0 && !this.emptyGrants.has(String(p.accessToken)))
      return this.error(conn, id, ErrorCode.CH_ACCESS_TOKEN_INVALID, 'Access token is invalid');
    this.send(
      conn,
      PayloadType.PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_RES,
      { accessToken: p.accessToken, permissionScope: 1, ctidTraderAccount: ctids.map((ctid) => ({ ctidTraderAccountId: ctid, ...this.listed.get(ctid)! })) },
      id,
    );
  }

  /** Access tokens granted for no account (the trader ticked none): valid, with an empty list. */
  readonly emptyGrants = new Set<string>();

  private refresh(conn: Conn, id: string | undefined, p: Record<string, unknown>): void {
    const entry = [...this.grants.entries()].find(([, g]) => g.refreshToken === p.refreshToken);
    if (!entry) return this.error(conn, id, ErrorCode.CH_ACCESS_TOKEN_INVALID, 'Refresh token is invalid');
    const [ctid, grant] = entry;
    Object.assign(grant, { accessToken: `at_${randomBytes(16).toString('hex')}`, refreshToken: `rt_${randomBytes(16).toString('hex')}`, expired: false });
    const sessions = [...this.conns].filter((c) => c.accounts.delete(ctid));
    for (const c of sessions) c.spots.delete(ctid);
    this.send(
      conn,
      PayloadType.PROTO_OA_REFRESH_TOKEN_RES,
      { accessToken: grant.accessToken, tokenType: 'bearer', expiresIn: 2_628_000, refreshToken: grant.refreshToken },
      id,
    );
    // ProtoOAAccountsTokenInvalidatedEvent: "token was refreshed" ends the account's sessions.
    for (const c of sessions)
      this.send(c, PayloadType.PROTO_OA_ACCOUNTS_TOKEN_INVALIDATED_EVENT, { ctidTraderAccountIds: [ctid], reason: 'Access Token was refreshed' });
  }

  /** The answers to one request of an authorized account, in order, without clientMsgId. */
  answer(account: DoubleAccount, env: Envelope): Envelope[] {
    return TRADING.has(env.payloadType) ? tradingAnswers(account, env, Date.now()) : [answerQuery(this.symbols, this.assets, account, env)];
  }

  private takeLoss(payloadType: number): boolean {
    const left = this.loseAnswer.get(payloadType) ?? 0;
    if (left <= 0) return false;
    this.loseAnswer.set(payloadType, left - 1);
    return true;
  }
}
