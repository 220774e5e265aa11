import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { temporalConnectionOptions } from './connection-options';
import type { RegionConfig } from '../config-regions';
import { neverSent, NotSentError } from './failures';

/**
 * How long to try to reach an unreachable Temporal before the call gives up (then 503 backpressure, or a retry by the
 * starter). A reachable frontend answers a connect in milliseconds; a second tells a down one from a slow one without
 * holding a webhook for long.
 */
export const TEMPORAL_CONNECT_TIMEOUT_MS = 1000;

/**
 * Execution regions: each is a Temporal connection (address and namespace). Connections are lazy, so an ingress
 * starts with a region down and answers 503 for it instead of crashing.
 */
export class Regions {
  private readonly byName = new Map<string, { config: RegionConfig; connection: Connection; client: Client }>();

  constructor(
    configs: RegionConfig[],
    private readonly callTimeoutMs: number,
    private readonly connectTimeoutMs = callTimeoutMs,
  ) {
    for (const config of configs) this.byName.set(config.name, this.open(config));
  }

  private open(config: RegionConfig) {
    const retry = defaultGrpcRetryOptions();
    // A call that could not be sent (no connection) fails at once instead of backing off past the caller's deadline,
    // so a start that certainly did not happen is answered "not accepted" quickly (TemporalExecutions.launch).
    const interceptors = [
      makeGrpcRetryInterceptor({ ...retry, retryableDecider: (attempt, status) => !neverSent(status) && retry.retryableDecider(attempt, status) }),
    ];
    const connection = Connection.lazy({ ...temporalConnectionOptions(config), connectTimeout: this.connectTimeoutMs, interceptors });
    return { config, connection, client: new Client({ connection, namespace: config.namespace }) };
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  client(name: string): Client {
    const region = this.byName.get(name);
    if (!region) throw new Error(`unknown region ${name}`);
    return region.client;
  }

  /**
   * Runs a call against a region with a hard deadline (epoch ms; by default the call timeout from now), so the ingress
   * never hangs on a slow or dead Temporal. Several calls of one request share one deadline.
   */
  async call<T>(name: string, fn: (client: Client) => Promise<T>, deadline = Date.now() + this.callTimeoutMs): Promise<T> {
    const region = this.byName.get(name);
    if (!region) throw new Error(`unknown region ${name}`);
    if (Date.now() >= deadline) throw new NotSentError('deadline exceeded before calling Temporal');
    try {
      await region.connection.ensureConnected();
    } catch (err) {
      // A lazy connection keeps its first failed connect forever; a fresh one lets the region recover by itself.
      if (this.byName.get(name) === region) {
        this.byName.set(name, this.open(region.config));
        void region.connection.close().catch(() => undefined);
      }
      throw new NotSentError(`cannot reach Temporal region ${name}`, { cause: err });
    }
    // withDeadline alone is not a hard bound: the client's own retry may sleep past it. Stop waiting at the deadline;
    // a start abandoned here is ambiguous, and the caller confirms it (TemporalExecutions.launch).
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('deadline exceeded waiting for Temporal')), Math.max(deadline - Date.now(), 0));
    });
    try {
      return await Promise.race([region.connection.withDeadline(deadline, () => fn(region.client)), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Bounded: a connection still trying to reach a dead address must not hold up shutdown. */
  async close(timeoutMs = 2000): Promise<void> {
    const closing = Promise.allSettled([...this.byName.values()].map((r) => r.connection.close()));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }
}
