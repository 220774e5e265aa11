import { Client, Connection } from '@temporalio/client';
import type { RegionConfig } from '../config';

/**
 * Execution regions: each is a Temporal connection (address and namespace). Connections are lazy, so an ingress
 * starts with a region down and answers 503 for it instead of crashing.
 */
export class Regions {
  private readonly byName = new Map<string, { config: RegionConfig; connection: Connection; client: Client }>();

  constructor(
    configs: RegionConfig[],
    private readonly callTimeoutMs: number,
  ) {
    for (const config of configs) {
      const connection = Connection.lazy({ address: config.address, connectTimeout: callTimeoutMs });
      this.byName.set(config.name, { config, connection, client: new Client({ connection, namespace: config.namespace }) });
    }
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

  /** Runs a call against a region with a hard deadline, so the ingress never hangs on a slow or dead Temporal. */
  async call<T>(name: string, fn: (client: Client) => Promise<T>, timeoutMs = this.callTimeoutMs): Promise<T> {
    const region = this.byName.get(name);
    if (!region) throw new Error(`unknown region ${name}`);
    return region.connection.withDeadline(Date.now() + timeoutMs, () => fn(region.client));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.byName.values()].map((r) => r.connection.close()));
  }
}
