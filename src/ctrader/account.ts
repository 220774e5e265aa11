import type { AccountCredential } from './credentials';
import { OpenApiError, type Completion, type OpenApiConnection } from './connection';
import {
  ErrorCode,
  PayloadType,
  REAUTH_CODES,
  type Asset,
  type Deal,
  type Envelope,
  type ExecutionEvent,
  type FullSymbol,
  type LightSymbol,
  type Order,
  type Position,
  type Trader,
} from './messages';
import { SpotQuotes } from './spot-quotes';
import { symbolSpec, type SymbolSpec } from './units';

/**
 * One cTrader account on a shared Open API connection: account auth (again after every reconnect, token refresh
 * or server-side invalidation), its symbols, its open positions and orders, and the trading requests, each answered
 * by the execution event that completes it. Tokens are read from the credential and never logged.
 */

export interface AccountOptions {
  credential: AccountCredential;
  connection: OpenApiConnection;
  /** Where refreshed tokens are saved (the credentials file, or a linked account's record); without it, memory only (tests). */
  store?: TokenSink;
  /**
   * cTrader refused the refresh token (revoked access, or the token was replaced elsewhere): only the owner can fix it,
   * by authorising again. Called with cTrader's error code.
   */
  onTokensRefused?: (errorCode: string) => void;
  /** Refresh the access token this long before it expires. Default 1 hour. */
  refreshAheadMs?: number;
  diag?: (line: Record<string, unknown>) => void;
}

export interface TokenSink {
  updateTokens(accountId: string, tokens: Pick<AccountCredential, 'accessToken' | 'refreshToken' | 'accessTokenExpiresAt'>): unknown;
}

export class CtraderAccount {
  readonly accountId: string;
  readonly ctid: number;
  private credential: AccountCredential;
  private authorized = false;
  private authorizing: Promise<void> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private symbols = new Map<string, SymbolSpec>();
  private symbolsById = new Map<number, SymbolSpec>();
  private readonly spots: SpotQuotes;
  /** Asset names by assetId (ProtoOAAssetListReq): they do not change while the connector runs. */
  private assetNames: Map<number, string> | undefined;
  /** Conversion chains by "from:to" asset ids (ProtoOASymbolsForConversionReq), for the current session. */
  private chains = new Map<string, LightSymbol[]>();
  private readonly diag: (line: Record<string, unknown>) => void;
  private stopped = false;
  readonly stats = { authorizations: 0, refreshes: 0 };

  constructor(private readonly opts: AccountOptions) {
    this.credential = opts.credential;
    this.accountId = opts.credential.accountId;
    this.ctid = opts.credential.ctidTraderAccountId;
    this.diag = opts.diag ?? (() => undefined);
    this.spots = new SpotQuotes(this.ctid, (type, payload) => this.call(type, payload));
    opts.connection.onReady(async () => {
      // The connection outlives an account taken off it (an unlinked or re-linked account): it has no handler to remove.
      if (this.stopped) return;
      this.authorized = false;
      this.endSession();
      await this.authorizeDuringSetup().catch((err: unknown) =>
        this.diag({ event: 'account_auth_error', accountId: this.accountId, error: errorMessage(err) }),
      );
    });
    opts.connection.onEvent((env) => {
      if (!this.stopped) this.onEvent(env);
    });
    opts.connection.onExecution((env, answered) => {
      const e = env.payload as unknown as ExecutionEvent | undefined;
      if (this.stopped || e?.ctidTraderAccountId !== this.ctid) return;
      for (const l of this.executionListeners) l(e, answered);
    });
  }

  get isAuthorized(): boolean {
    return this.authorized;
  }

  stop(): void {
    this.stopped = true;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
  }

  /**
   * ProtoOAAccountAuthReq with the current access token, refreshing it first when it is (about to be) expired.
   * Outside a connection's setup it waits for the connection first (whose setup authorizes the account itself).
   */
  async authorize(): Promise<void> {
    await this.opts.connection.whenReady();
    if (this.authorized) return;
    this.authorizing ??= this.doAuthorize(false).finally(() => (this.authorizing = undefined));
    await this.authorizing;
  }

  /** The connection's setup (after a (re)connect): its own attempt, never one waiting for that setup to end. */
  private authorizeDuringSetup(): Promise<void> {
    const attempt = this.doAuthorize(true).finally(() => {
      if (this.authorizing === attempt) this.authorizing = undefined;
    });
    this.authorizing = attempt;
    return attempt;
  }

  private async doAuthorize(duringSetup: boolean): Promise<void> {
    const send = (type: number, payload: Record<string, unknown>) =>
      duringSetup ? this.opts.connection.sendDuringSetup(type, payload) : this.opts.connection.request(type, payload);
    if (this.expiresSoon()) await this.refresh(send);
    try {
      await send(PayloadType.PROTO_OA_ACCOUNT_AUTH_REQ, { ctidTraderAccountId: this.ctid, accessToken: this.credential.accessToken });
    } catch (err) {
      if (err instanceof OpenApiError && err.errorCode === ErrorCode.ALREADY_LOGGED_IN) {
        // already authorized on this connection: fine
      } else if (err instanceof OpenApiError && REAUTH_CODES.has(err.errorCode)) {
        await this.refresh(send);
        await send(PayloadType.PROTO_OA_ACCOUNT_AUTH_REQ, { ctidTraderAccountId: this.ctid, accessToken: this.credential.accessToken });
      } else {
        throw err;
      }
    }
    this.authorized = true;
    this.stats.authorizations++;
    this.scheduleRefresh();
    this.diag({ event: 'account_authorized', accountId: this.accountId, ctidTraderAccountId: this.ctid });
    for (const l of this.sessionListeners) l();
  }

  private expiresSoon(): boolean {
    const at = this.credential.accessTokenExpiresAt;
    return at !== undefined && at - Date.now() <= (this.opts.refreshAheadMs ?? 3_600_000);
  }

  private scheduleRefresh(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    const at = this.credential.accessTokenExpiresAt;
    if (at === undefined) return;
    const wait = Math.max(1_000, Math.min(at - Date.now() - (this.opts.refreshAheadMs ?? 3_600_000), 2_147_000_000));
    this.refreshTimer = setTimeout(() => {
      this.authorized = false;
      void this.authorize().catch((err: unknown) => this.diag({ event: 'account_auth_error', accountId: this.accountId, error: errorMessage(err) }));
    }, wait);
    this.refreshTimer.unref();
  }

  /** ProtoOARefreshTokenReq: Open API answers with a new access token and a new refresh token; both are saved at once. */
  private async refresh(send: (type: number, payload: Record<string, unknown>) => Promise<Envelope>): Promise<void> {
    let res: Envelope;
    try {
      res = await send(PayloadType.PROTO_OA_REFRESH_TOKEN_REQ, { refreshToken: this.credential.refreshToken });
    } catch (err) {
      if (err instanceof OpenApiError && REAUTH_CODES.has(err.errorCode)) {
        this.diag({ event: 'token_refresh_refused', accountId: this.accountId, errorCode: err.errorCode });
        this.opts.onTokensRefused?.(err.errorCode);
      }
      throw err;
    }
    const p = res.payload as { accessToken?: string; refreshToken?: string; expiresIn?: number };
    if (!p.accessToken || !p.refreshToken) throw new Error('ProtoOARefreshTokenRes without tokens');
    const tokens = {
      accessToken: p.accessToken,
      refreshToken: p.refreshToken,
      accessTokenExpiresAt: typeof p.expiresIn === 'number' ? Date.now() + p.expiresIn * 1000 : undefined,
    };
    this.credential = { ...this.credential, ...tokens };
    void Promise.resolve()
      .then(() => this.opts.store?.updateTokens(this.accountId, tokens))
      .catch((err: unknown) => this.diag({ event: 'token_save_failed', accountId: this.accountId, error: errorMessage(err) }));
    this.stats.refreshes++;
    this.diag({
      event: 'token_refreshed',
      accountId: this.accountId,
      expiresAt: tokens.accessTokenExpiresAt ? new Date(tokens.accessTokenExpiresAt).toISOString() : null,
    });
  }

  /** Subscriptions belong to an account session: a new session subscribes again. */
  private endSession(): void {
    this.spots.endSession();
    this.chains.clear();
  }

  private onEvent(env: Envelope): void {
    if (this.spots.take(env)) return;
    const p = (env.payload ?? {}) as { ctidTraderAccountId?: number; ctidTraderAccountIds?: number[] };
    const mine =
      (env.payloadType === PayloadType.PROTO_OA_ACCOUNTS_TOKEN_INVALIDATED_EVENT && (p.ctidTraderAccountIds ?? []).includes(this.ctid)) ||
      (env.payloadType === PayloadType.PROTO_OA_ACCOUNT_DISCONNECT_EVENT && p.ctidTraderAccountId === this.ctid);
    if (!mine) return;
    this.authorized = false;
    this.endSession();
    this.diag({ event: 'account_session_ended', accountId: this.accountId, payloadType: env.payloadType });
    void this.authorize().catch((err: unknown) => this.diag({ event: 'account_auth_error', accountId: this.accountId, error: errorMessage(err) }));
  }

  /**
   * A request on behalf of this account. A refusal that means "not authorized" (the request did nothing) is followed
   * by one authorization and one retry.
   */
  async call(
    payloadType: number,
    payload: Record<string, unknown>,
    opts: { done?: Completion; notAfter?: number; timeoutMs?: number } = {},
  ): Promise<Envelope> {
    if (!this.authorized) await this.authorize();
    const body = { ctidTraderAccountId: this.ctid, ...payload };
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.opts.connection.request(payloadType, body, opts);
      } catch (err) {
        if (!(err instanceof OpenApiError) || attempt >= 3) throw err;
        if (REAUTH_CODES.has(err.errorCode)) {
          this.authorized = false;
          await this.authorize();
        } else if (THROTTLED.has(err.errorCode)) {
          // The proxy's rate limit refused it (nothing was done): wait as long as it asks, then send again.
          await new Promise((resolve) => setTimeout(resolve, Math.min(10, Math.max(1, err.retryAfter ?? 1)) * 1000));
        } else {
          throw err;
        }
      }
    }
  }

  // ---- symbols -----------------------------------------------------------------------------------------------------

  /** ProtoOASymbolsListReq, then ProtoOASymbolByIdReq in batches for digits, pip position, lot size and volumes. */
  async loadSymbols(): Promise<SymbolSpec[]> {
    const list = await this.call(PayloadType.PROTO_OA_SYMBOLS_LIST_REQ, { includeArchivedSymbols: false });
    const light = ((list.payload as { symbol?: LightSymbol[] }).symbol ?? [])
      .filter((s) => s.enabled !== false && s.symbolName)
      .sort((a, b) => (a.sortingNumber ?? Number.MAX_VALUE) - (b.sortingNumber ?? Number.MAX_VALUE));
    const names = new Map(light.map((s) => [s.symbolId, s.symbolName!]));
    const quoteAssets = new Map(light.filter((s) => s.quoteAssetId !== undefined).map((s) => [s.symbolId, s.quoteAssetId!]));
    const specs: SymbolSpec[] = [];
    for (let i = 0; i < light.length; i += 200) {
      const ids = light.slice(i, i + 200).map((s) => s.symbolId);
      const res = await this.call(PayloadType.PROTO_OA_SYMBOL_BY_ID_REQ, { symbolId: ids });
      for (const full of (res.payload as { symbol?: FullSymbol[] }).symbol ?? []) {
        const spec = symbolSpec(names.get(full.symbolId) ?? String(full.symbolId), full);
        const quoteAssetId = quoteAssets.get(full.symbolId);
        if (spec) specs.push(quoteAssetId !== undefined ? { ...spec, quoteAssetId } : spec);
      }
    }
    this.symbols = new Map(specs.map((s) => [s.name.toUpperCase(), s]));
    this.symbolsById = new Map(specs.map((s) => [s.symbolId, s]));
    return specs;
  }

  symbol(name: string): SymbolSpec | undefined {
    return this.symbols.get(name.toUpperCase());
  }

  symbolById(id: number): SymbolSpec | undefined {
    return this.symbolsById.get(id);
  }

  /** The current bid and ask of a symbol (subscribed to once per session: src/ctrader/spot-quotes.ts). */
  quote(symbolId: number, timeoutMs = 5_000): Promise<{ bid: number; ask: number }> {
    return this.spots.quote(symbolId, timeoutMs);
  }

  private readonly executionListeners: ((e: ExecutionEvent, answered: boolean) => void)[] = [];
  private readonly sessionListeners: (() => void)[] = [];

  /** Told every execution of this account; `answered`: it answered a request the connector sent. */
  onExecution(listener: (e: ExecutionEvent, answered: boolean) => void): void {
    this.executionListeners.push(listener);
  }

  /** Told after each account authorization: a new session, before which executions may have been missed. */
  onSession(listener: () => void): void {
    this.sessionListeners.push(listener);
  }

  /** Told every spot of a subscribed symbol (the stop-out's watch looks on them, at most once a second). */
  onSpot(listener: (symbolId: number) => void): void {
    this.spots.onSpot(listener);
  }

  /** The latest bid and ask of a symbol subscribed in this session, or undefined before its first spot. */
  lastQuote(symbolId: number): { bid: number; ask: number } | undefined {
    return this.spots.last(symbolId);
  }

  /** When the last spot of a symbol reached the connector (ms since the epoch), or undefined before the first. */
  quoteReceivedAt(symbolId: number): number | undefined {
    return this.spots.receivedAt(symbolId);
  }

  // ---- state -------------------------------------------------------------------------------------------------------

  async reconcile(): Promise<{ positions: Position[]; orders: Order[] }> {
    const res = await this.call(PayloadType.PROTO_OA_RECONCILE_REQ, {});
    const p = res.payload as { position?: Position[]; order?: Order[] };
    return { positions: p.position ?? [], orders: p.order ?? [] };
  }

  /**
   * Deals executed in a time window (ProtoOADealListReq), oldest first: page after page while `hasMore`, each from the
   * last one's time (a deal seen twice at that boundary is kept once), at most `maxPages`.
   */
  async dealHistory(fromTimestamp: number, toTimestamp: number, maxPages = 20): Promise<Deal[]> {
    const byId = new Map<number, Deal>();
    let from = fromTimestamp;
    for (let page = 0; page < maxPages; page++) {
      const res = await this.call(PayloadType.PROTO_OA_DEAL_LIST_REQ, { fromTimestamp: from, toTimestamp, maxRows: 1000 });
      const p = res.payload as { deal?: Deal[]; hasMore?: boolean };
      const deals = p.deal ?? [];
      for (const d of deals) byId.set(d.dealId, d);
      const last = Math.max(...deals.map((d) => d.executionTimestamp ?? d.createTimestamp ?? from));
      if (!p.hasMore || deals.length === 0 || last <= from) break;
      from = last;
    }
    return [...byId.values()];
  }

  /** Orders of any status (filled, cancelled, rejected too) in a time window (ProtoOAOrderListReq). */
  async orderHistory(fromTimestamp: number, toTimestamp: number): Promise<Order[]> {
    const res = await this.call(PayloadType.PROTO_OA_ORDER_LIST_REQ, { fromTimestamp, toTimestamp });
    return (res.payload as { order?: Order[] }).order ?? [];
  }

  /**
   * One order of any status and the deals that filled it (ProtoOAOrderDetailsReq); undefined when the broker has no
   * such order (ORDER_NOT_FOUND).
   */
  async orderDetails(orderId: number): Promise<{ order: Order; deals: Deal[] } | undefined> {
    try {
      const res = await this.call(PayloadType.PROTO_OA_ORDER_DETAILS_REQ, { orderId });
      const p = res.payload as { order?: Order; deal?: Deal[] };
      return p.order ? { order: p.order, deals: p.deal ?? [] } : undefined;
    } catch (err) {
      if (err instanceof OpenApiError && err.errorCode === ErrorCode.ORDER_NOT_FOUND) return undefined;
      throw err;
    }
  }

  /** ProtoOATraderReq: the balance (moneyDigits applied) and the deposit currency's assetId. */
  async trader(opts: { timeoutMs?: number } = {}): Promise<{ balance: number; depositAssetId: number; moneyDigits: number }> {
    const res = await this.call(PayloadType.PROTO_OA_TRADER_REQ, {}, opts);
    const t = (res.payload as { trader?: Trader }).trader;
    if (!t) throw new OpenApiError('NO_TRADER', 'ProtoOATraderRes without a trader', PayloadType.PROTO_OA_TRADER_RES);
    const moneyDigits = t.moneyDigits ?? 2;
    return { balance: t.balance / 10 ** moneyDigits, depositAssetId: t.depositAssetId, moneyDigits };
  }

  /** An asset's name (ProtoOAAssetListReq, asked once): the account currency of the figures. */
  async assetName(assetId: number, opts: { timeoutMs?: number } = {}): Promise<string | undefined> {
    if (!this.assetNames) {
      const res = await this.call(PayloadType.PROTO_OA_ASSET_LIST_REQ, {}, opts);
      this.assetNames = new Map(((res.payload as { asset?: Asset[] }).asset ?? []).map((a) => [a.assetId, a.name]));
    }
    return this.assetNames.get(assetId);
  }

  /**
   * The symbols that convert one asset into another (ProtoOASymbolsForConversionReq: "e.g. EUR/USD, USD/JPY, GBP/JPY ->
   * EUR/GBP"), in chain order; kept for the session, since only their prices move.
   */
  async conversionChain(firstAssetId: number, lastAssetId: number, opts: { timeoutMs?: number } = {}): Promise<LightSymbol[]> {
    const key = `${firstAssetId}:${lastAssetId}`;
    const known = this.chains.get(key);
    if (known) return known;
    const res = await this.call(PayloadType.PROTO_OA_SYMBOLS_FOR_CONVERSION_REQ, { firstAssetId, lastAssetId }, opts);
    const chain = (res.payload as { symbol?: LightSymbol[] }).symbol ?? [];
    this.chains.set(key, chain);
    return chain;
  }

  /** Net unrealized P&L by positionId (ProtoOAGetPositionUnrealizedPnLReq), in the deposit currency. */
  async unrealizedPnl(opts: { timeoutMs?: number } = {}): Promise<Map<number, number>> {
    const res = await this.call(PayloadType.PROTO_OA_GET_POSITION_UNREALIZED_PNL_REQ, {}, opts);
    const p = res.payload as { positionUnrealizedPnL?: { positionId: number; netUnrealizedPnL: number }[]; moneyDigits?: number };
    const scale = 10 ** (p.moneyDigits ?? 2);
    return new Map((p.positionUnrealizedPnL ?? []).map((u) => [u.positionId, u.netUnrealizedPnL / scale]));
  }
}

const THROTTLED: ReadonlySet<string> = new Set([ErrorCode.BLOCKED_PAYLOAD_TYPE, ErrorCode.REQUEST_FREQUENCY_EXCEEDED]);

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
