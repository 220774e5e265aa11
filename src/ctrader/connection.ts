import { randomBytes } from 'node:crypto';
import { ExecutionType, PAYLOAD_NAMES, PayloadType, type Envelope, type ExecutionEvent } from './messages';
import { SlidingWindowLimiter } from './rate-limiter';

/**
 * One Open API connection (JSON over WebSocket, port 5036) shared by every account of one environment (demo or
 * live): application auth, request/response by clientMsgId, heartbeats, the per-connection request limit, and
 * reconnects. What a reconnect means for the accounts (authorize again) is the caller's, through `onReady`.
 */

/** The WHATWG WebSocket surface the connection uses (Node's built-in client, or a test's). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'close' | 'error' | 'message', listener: (event: { data?: unknown }) => void): void;
}
export type WebSocketFactory = (url: string) => WebSocketLike;

function builtinWebSocket(): WebSocketFactory {
  const Impl = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  if (!Impl) throw new Error('this Node has no WebSocket client: run Node 24 or later (package.json engines)');
  return (url) => new Impl(url);
}

/** The broker answered the request with an error (ProtoErrorRes, ProtoOAErrorRes, ProtoOAOrderErrorEvent, a rejection). */
export class OpenApiError extends Error {
  constructor(
    readonly errorCode: string,
    readonly description: string,
    readonly payloadType: number,
    /** ProtoOAErrorRes.retryAfter: seconds until a BLOCKED_PAYLOAD_TYPE payload type is unlocked. */
    readonly retryAfter?: number,
  ) {
    super(`${errorCode}${description ? ` ${description}` : ''}`);
  }
}

/** The request may or may not have reached the broker: the connection went away or the answer never came. */
export class OutcomeUnknown extends Error {}

/** The request was not sent: the moment it could have gone out was past its deadline (a command's expiresAt). */
export class NotSentInTime extends Error {}

export interface ConnectionOptions {
  url: string;
  clientId: string;
  clientSecret: string;
  /** Open API's limit is 50 per second per connection. */
  requestsPerSecond?: number;
  /** How often we send ProtoHeartbeatEvent; the connection counts as dead after 3 of these without any message. */
  heartbeatMs?: number;
  requestTimeoutMs?: number;
  webSocket?: WebSocketFactory;
  backoff?: { initialMs?: number; maxMs?: number };
  diag?: (line: Record<string, unknown>) => void;
  label?: string;
}

/** Decides when a request is answered: the envelope that completes it (others with its clientMsgId are progress). */
export type Completion = (env: Envelope) => boolean;

interface Pending {
  done: Completion;
  resolve: (env: Envelope) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const OPEN = 1;

export class OpenApiConnection {
  private socket: WebSocketLike | undefined;
  private readonly pending = new Map<string, Pending>();
  private readonly eventHandlers: ((env: Envelope) => void)[] = [];
  private readonly executionTaps: ((env: Envelope, answered: boolean) => void)[] = [];
  private readonly readyHandlers: (() => Promise<void>)[] = [];
  private readonly limiter: SlidingWindowLimiter;
  private readonly diag: (line: Record<string, unknown>) => void;
  private running = false;
  private ready = false;
  private readyWaiters: (() => void)[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private lastMessageAt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private delay: number;
  private seq = 0;
  readonly stats = { connects: 0, sent: 0, received: 0 };

  constructor(private readonly opts: ConnectionOptions) {
    // A window of 1.1 s, not 1 s: what the proxy counts is when requests arrive, and arrival times jitter.
    this.limiter = new SlidingWindowLimiter(opts.requestsPerSecond ?? 50, 1_100);
    this.diag = opts.diag ?? (() => undefined);
    this.delay = opts.backoff?.initialMs ?? 100;
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** Messages that answer no pending request: server-side executions, token invalidation, disconnect events. */
  onEvent(handler: (env: Envelope) => void): void {
    this.eventHandlers.push(handler);
  }

  /**
   * Every ProtoOAExecutionEvent, whether it answers one of our requests (`answered`) or the server pushed it (an SL hit,
   * a close in the terminal): what the trade events are made of (src/ctrader/trade-feed.ts).
   */
  onExecution(handler: (env: Envelope, answered: boolean) => void): void {
    this.executionTaps.push(handler);
  }

  /** Runs after each (re)connect and application auth, before requests flow; e.g. authorize the accounts again. */
  onReady(handler: () => Promise<void>): void {
    this.readyHandlers.push(handler);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.connect();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.ready = false;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.stopHeartbeat();
    this.failPending(new OutcomeUnknown('connection stopped'));
    this.socket?.close(1000, 'stopping');
    this.socket = undefined;
    for (const w of this.readyWaiters.splice(0)) w();
  }

  /** Resolves when the connection is up and the application is authorized (or after timeoutMs, rejecting). */
  whenReady(timeoutMs = 30_000): Promise<void> {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((w) => w !== done);
        reject(new Error(`Open API ${this.opts.label ?? this.opts.url} not ready within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        if (this.ready) resolve();
        else reject(new Error('connection stopped'));
      };
      this.readyWaiters.push(done);
    });
  }

  /**
   * Sends one request and resolves with the envelope that completes it (by default the first answer with its
   * clientMsgId). Waits for a ready connection and for room under the request limit; `notAfter` (epoch ms) refuses to
   * send once that moment has passed. Rejects with OpenApiError when the broker refused, OutcomeUnknown when the
   * answer was lost.
   */
  async request(
    payloadType: number,
    payload: Record<string, unknown>,
    opts: { done?: Completion; notAfter?: number; timeoutMs?: number } = {},
  ): Promise<Envelope> {
    await this.whenReady(opts.notAfter !== undefined ? Math.max(1, opts.notAfter - Date.now()) : 30_000).catch((err: unknown) => {
      throw opts.notAfter !== undefined && Date.now() >= opts.notAfter ? new NotSentInTime(err instanceof Error ? err.message : String(err)) : err;
    });
    return this.send(payloadType, payload, opts);
  }

  private async send(
    payloadType: number,
    payload: Record<string, unknown>,
    opts: { done?: Completion; notAfter?: number; timeoutMs?: number },
  ): Promise<Envelope> {
    await this.limiter.take();
    if (opts.notAfter !== undefined && Date.now() > opts.notAfter) throw new NotSentInTime('past the deadline before it could be sent');
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN) throw new OutcomeUnknown('connection lost before sending');
    const clientMsgId = `cm_${(++this.seq).toString(36)}_${randomBytes(4).toString('hex')}`;
    return new Promise<Envelope>((resolve, reject) => {
      const timeoutMs = opts.timeoutMs ?? this.opts.requestTimeoutMs ?? 15_000;
      const timer = setTimeout(() => {
        this.pending.delete(clientMsgId);
        reject(new OutcomeUnknown(`no answer to ${PAYLOAD_NAMES.get(payloadType) ?? payloadType} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(clientMsgId, { done: opts.done ?? (() => true), resolve, reject, timer });
      try {
        socket.send(JSON.stringify({ clientMsgId, payloadType, payload }));
        this.stats.sent++;
      } catch (err) {
        clearTimeout(timer);
        this.pending.delete(clientMsgId);
        reject(new OutcomeUnknown(`send failed: ${(err as Error)?.message ?? String(err)}`));
      }
    });
  }

  private connect(): void {
    if (!this.running) return;
    let socket: WebSocketLike;
    try {
      socket = (this.opts.webSocket ?? builtinWebSocket())(this.opts.url);
    } catch (err) {
      this.diag({ event: 'openapi_connect_error', connection: this.opts.label, error: (err as Error).message });
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.addEventListener('open', () => void this.opened(socket));
    socket.addEventListener('message', (e) => this.received(socket, e.data));
    socket.addEventListener('error', () => undefined);
    socket.addEventListener('close', () => this.closed(socket));
  }

  private async opened(socket: WebSocketLike): Promise<void> {
    if (socket !== this.socket) return;
    this.stats.connects++;
    this.lastMessageAt = Date.now();
    this.startHeartbeat(socket);
    try {
      await this.send(PayloadType.PROTO_OA_APPLICATION_AUTH_REQ, { clientId: this.opts.clientId, clientSecret: this.opts.clientSecret }, {});
      for (const handler of this.readyHandlers) await handler();
    } catch (err) {
      // Never log the request: it carries the client secret. The error is the broker's code and description only.
      this.diag({ event: 'openapi_auth_error', connection: this.opts.label, error: (err as Error).message });
      if (socket === this.socket) socket.close(4000, 'application auth failed');
      return;
    }
    if (socket !== this.socket) return;
    this.delay = this.opts.backoff?.initialMs ?? 100;
    this.ready = true;
    this.diag({ event: 'openapi_ready', connection: this.opts.label });
    for (const w of this.readyWaiters.splice(0)) w();
  }

  /** The readiness handlers run before `ready` is set; they send through this (same checks, no readiness wait). */
  sendDuringSetup(payloadType: number, payload: Record<string, unknown>, done?: Completion): Promise<Envelope> {
    return this.send(payloadType, payload, { done });
  }

  private received(socket: WebSocketLike, data: unknown): void {
    if (socket !== this.socket) return;
    this.lastMessageAt = Date.now();
    this.stats.received++;
    let env: Envelope;
    try {
      env = JSON.parse(typeof data === 'string' ? data : Buffer.from(data as ArrayBuffer).toString('utf8')) as Envelope;
    } catch {
      this.diag({ event: 'openapi_bad_message', connection: this.opts.label });
      return;
    }
    if (typeof env?.payloadType !== 'number') return;
    if (env.payloadType === PayloadType.HEARTBEAT_EVENT) return;
    const waiting = env.clientMsgId ? this.pending.get(env.clientMsgId) : undefined;
    if (env.payloadType === PayloadType.PROTO_OA_EXECUTION_EVENT) for (const t of this.executionTaps) t(env, waiting !== undefined);
    if (!waiting) {
      for (const h of this.eventHandlers) h(env);
      return;
    }
    const refusal = refusalOf(env);
    if (refusal) {
      this.settle(env.clientMsgId!, waiting);
      waiting.reject(refusal);
      return;
    }
    if (!waiting.done(env)) return;
    this.settle(env.clientMsgId!, waiting);
    waiting.resolve(env);
  }

  private settle(id: string, p: Pending): void {
    clearTimeout(p.timer);
    this.pending.delete(id);
  }

  private closed(socket: WebSocketLike): void {
    if (socket !== this.socket) return;
    this.socket = undefined;
    this.ready = false;
    this.stopHeartbeat();
    this.failPending(new OutcomeUnknown('connection to Open API lost'));
    if (!this.running) return;
    this.diag({ event: 'openapi_disconnected', connection: this.opts.label, retryInMs: this.delay });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (!this.running) return;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.opts.backoff?.maxMs ?? 10_000);
    this.reconnectTimer = setTimeout(() => this.connect(), wait);
  }

  private failPending(err: Error): void {
    for (const [id, p] of this.pending) {
      this.settle(id, p);
      p.reject(err);
    }
  }

  private startHeartbeat(socket: WebSocketLike): void {
    this.stopHeartbeat();
    const every = this.opts.heartbeatMs ?? 10_000;
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastMessageAt > every * 3) {
        this.diag({ event: 'openapi_silent', connection: this.opts.label, silentMs: Date.now() - this.lastMessageAt });
        socket.close(4001, 'no message for three heartbeats');
        this.closed(socket);
        return;
      }
      void this.limiter.take().then(() => {
        if (socket.readyState === OPEN) socket.send(JSON.stringify({ payloadType: PayloadType.HEARTBEAT_EVENT, payload: {} }));
      });
    }, every);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

/** The broker's refusal carried by an answer, if it is one. */
export function refusalOf(env: Envelope): OpenApiError | undefined {
  const p = env.payload ?? {};
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (env.payloadType) {
    case PayloadType.ERROR_RES:
    case PayloadType.PROTO_OA_ERROR_RES:
    case PayloadType.PROTO_OA_ORDER_ERROR_EVENT:
      return new OpenApiError(
        text(p.errorCode) || 'UNKNOWN_ERROR',
        text(p.description),
        env.payloadType,
        typeof p.retryAfter === 'number' ? p.retryAfter : undefined,
      );
    case PayloadType.PROTO_OA_EXECUTION_EVENT: {
      const e = p as unknown as ExecutionEvent;
      if (e.executionType === ExecutionType.ORDER_REJECTED || e.executionType === ExecutionType.ORDER_CANCEL_REJECTED) {
        return new OpenApiError(e.errorCode || 'ORDER_REJECTED', text(p.description), env.payloadType);
      }
      return undefined;
    }
    default:
      return undefined;
  }
}
