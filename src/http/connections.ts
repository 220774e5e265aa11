import type { Server, Socket } from 'node:net';
import type { RequestHandler } from 'express';
import { Refusal } from '../refusal';

/**
 * Connections past the per-IP cap that are answered (503, Retry-After) rather than closed, open at once in one
 * process. Each holds a socket and a small answer; 4096 answers a burst from many capped addresses politely and past
 * it a flood costs us no more than a closed socket.
 */
export const MAX_OVER_CAP_CONNECTIONS = 4096;

/**
 * At most `max` open connections per client IP on this listener (MAX_CONNECTIONS_PER_IP), so that one client cannot
 * hold every socket of the process with half-sent requests. A connection past the cap is still answered: its request
 * gets 503 backpressure with `Retry-After` and the connection closes. A reset tells a sender nothing, and TradingView,
 * which posts every user's alerts from a handful of addresses, resends only on an answer (5xx). An answered connection
 * has a short idle deadline, so it holds nothing long, and at most `answeredMax` of them are open at once in the whole
 * process (MAX_OVER_CAP_CONNECTIONS): past that, one is closed at once before a byte is read, which bounds what a
 * flood of connections can hold. A trusted proxy (TRUST_PROXY) is not capped: it carries many clients, each capped at
 * the proxy. 0 turns the cap off.
 */
export class ConnectionCap {
  private readonly open = new Map<string, number>();
  private readonly over = new WeakSet<Socket>();
  private overOpen = 0;

  constructor(
    private readonly opts: {
      max: number;
      /** Connections past the cap that are answered (503) rather than closed, open at once in the process. */
      answeredMax: number;
      retryAfterSeconds: number;
      /** How long an over-cap connection may stay silent before it is closed. */
      overCapIdleMs?: number;
      /** Each connection answered 503 or closed past the cap. */
      onRefused?: () => void;
    },
  ) {}

  /** Counts the listener's connections; `isProxy` says whether a peer address is a trusted proxy. */
  watch(server: Server, isProxy: (address: string) => boolean = () => false): void {
    if (this.opts.max <= 0) return;
    server.prependListener('connection', (socket: Socket) => {
      const ip = socket.remoteAddress ?? 'unknown';
      if (isProxy(ip)) return;
      const count = this.open.get(ip) ?? 0;
      if (count >= this.opts.max) {
        this.opts.onRefused?.();
        if (this.overOpen >= this.opts.answeredMax) {
          socket.destroy();
          return;
        }
        this.overOpen++;
        this.over.add(socket);
        socket.once('close', () => this.overOpen--);
        socket.setTimeout(this.opts.overCapIdleMs ?? 2_000, () => socket.destroy());
        return;
      }
      this.open.set(ip, count + 1);
      socket.once('close', () => {
        const left = (this.open.get(ip) ?? 1) - 1;
        if (left <= 0) this.open.delete(ip);
        else this.open.set(ip, left);
      });
    });
  }

  /** First in the app: a request on a connection past the cap is refused before anything is read or looked up. */
  refuseOverCap(): RequestHandler {
    return (req, res, next) => {
      if (!this.over.has(req.socket)) {
        next();
        return;
      }
      res.setHeader('Connection', 'close');
      next(new Refusal('backpressure', 'too many connections from this address', { retryAfterSeconds: this.opts.retryAfterSeconds }));
    };
  }
}
