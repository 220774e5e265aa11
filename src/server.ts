import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Express } from 'express';
import { loadConfig, type Config } from './config';
import { createLogger } from './logger';
import { createApp } from './http/app';
import { createAdminApp } from './http/admin';
import { ConnectionDrain } from './http/connection-drain';
import { ownerDashboard } from './owners/wiring';
import { acceptDeps, connectBackends, gatewayDeps, type Backends, type IngressSeams } from './ingress-backends';
import { recordPublicUrl } from './owners/public-url';

export interface Ingress {
  url: string;
  port: number;
  /** The admin listener (/metrics, /readyz, /healthz); undefined when ADMIN_PORT=off. */
  adminUrl?: string;
  close(): Promise<void>;
}

export type { IngressSeams } from './ingress-backends';

/** Starts the ingress; a test starts and stops it the same way the process does. */
export async function startIngress(config: Config = loadConfig(), seams: IngressSeams = {}): Promise<Ingress> {
  const logger = createLogger(config.logLevel, 'ingress');
  const b = await connectBackends(config, logger);
  const drain = new ConnectionDrain();
  const app = createApp({
    connectionCap: b.connectionCap,
    owners: ownerDashboard(config, b.redis, b.registry, { regions: b.regions, reported: b.reported, deliveries: b.queue }),
    config,
    metrics: b.metrics,
    logger,
    redis: b.redis,
    accept: acceptDeps(config, seams, b, logger),
    status: {
      registry: b.registry,
      throttle: b.throttle,
      executions: b.executions,
      reported: b.reported,
      temporalWaitMs: config.poll.temporalWaitMs,
      failClosedRetryAfterSeconds: config.limits.failClosedRetryAfterSeconds,
    },
    gateway: gatewayDeps(config, b, logger),
  });
  const { server, admin } = await listenAll(app, config, b);
  drain.watch(server);
  // A trusted proxy's connections carry many clients: the cap counts clients at the proxy instead (docs/deployment.md).
  const trusted = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  b.connectionCap.watch(server, (address) => trusted(address, 0));
  const port = (server.address() as AddressInfo).port;
  const adminPort = admin ? (admin.address() as AddressInfo).port : undefined;
  // Without PUBLIC_URL the address is HOST and the port it listens on (PORT=0: the one the system gave).
  const defaulted = config.publicUrl === `http://${config.host}:${config.port}`;
  recordPublicUrl(b.redis, defaulted ? `http://${config.host}:${port}` : config.publicUrl);
  logger.info({ port, adminPort }, 'ingress listening');
  return {
    url: `http://${config.host}:${port}`,
    port,
    adminUrl: admin ? `http://${config.admin!.host}:${adminPort}` : undefined,
    close: () => stopIngress(server, admin, drain, b),
  };
}

/** The public listener and, unless ADMIN_PORT=off, the admin one (/metrics, /readyz, /healthz). */
async function listenAll(app: Express, config: Config, b: Backends): Promise<{ server: Server; admin: Server | undefined }> {
  const server = await listen(app, config.port, config.host);
  const admin = config.admin
    ? await listen(
        createAdminApp({
          metrics: b.metrics,
          redis: b.redis,
          regions: b.regions,
          readyTimeoutMs: config.temporal.startTimeoutMs,
          pendingStarts: () => b.starts.backlog(Date.now()),
          door: () => b.door.decide(),
        }),
        config.admin.port,
        config.admin.host,
      ).catch(async (err: unknown) => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        throw err;
      })
    : undefined;
  // Long-polls outlive the default keep-alive; give them room.
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = config.bridge.maxWaitMs + 30_000;
  return { server, admin };
}

/** Stops taking work, lets requests in flight finish (5 s at most), hands over answered reports, then disconnects. */
async function stopIngress(server: Server, admin: Server | undefined, drain: ConnectionDrain, b: Backends): Promise<void> {
  drain.begin();
  b.door.stop();
  b.presence.stop();
  await b.queue.close();
  await drain.close(server, 5000);
  // Reports answered already are handed over before Temporal's connections close; what is left, the workflows
  // read from Redis themselves.
  await b.courier.drain(2000);
  b.courier.close();
  // Starts in hand get a moment; what is left stays recorded in Redis, and another ingress (or the next run) starts it.
  await b.starter.drain(2000);
  b.starter.close();
  if (admin) {
    await new Promise<void>((resolve) => {
      admin.close(() => resolve());
      admin.closeAllConnections();
    });
  }
  await b.regions.close();
  b.redis.disconnect();
  b.queueRedis.disconnect();
}

function listen(app: Express, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = app.listen(port, host, () => resolve(s));
    s.once('error', reject);
  });
}

if (require.main === module) {
  startIngress()
    .then((ingress) => {
      const stop = () => void ingress.close().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
