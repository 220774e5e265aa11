import type { Server, ServerResponse } from 'node:http';

/**
 * Graceful stop for a listener: once stopping has begun, every answer closes its connection (also those of requests
 * already in flight, like long-polls), so kept-alive clients such as bridges let the server finish.
 */
export class ConnectionDrain {
  private stopping = false;
  private readonly inFlight = new Set<ServerResponse>();

  watch(server: Server): void {
    server.prependListener('request', (_req, res: ServerResponse) => {
      if (this.stopping) res.setHeader('Connection', 'close');
      this.inFlight.add(res);
      res.once('close', () => this.inFlight.delete(res));
    });
  }

  begin(): void {
    this.stopping = true;
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
  }

  /** In-flight requests finish; idle keep-alive connections close now; anything still open after `cutAfterMs` is cut. */
  async close(server: Server, cutAfterMs: number): Promise<void> {
    const cut = setTimeout(() => server.closeAllConnections(), cutAfterMs);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    clearTimeout(cut);
  }
}
