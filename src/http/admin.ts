import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import type { IngressMetrics } from '../metrics';
import type { Regions } from '../temporal/regions';
import type { DoorDecision } from '../signals/door';
import { livenessRoutes, readinessRoutes } from './routes/health';

/**
 * The ingress's admin listener (ADMIN_HOST:ADMIN_PORT, loopback by default): Prometheus /metrics, /readyz (which
 * dependency is down) and /healthz. Nothing here is for callers, so none of it is on the public listener but /healthz.
 */
export function createAdminApp(deps: {
  metrics: IngressMetrics;
  redis: Redis;
  regions: Regions;
  readyTimeoutMs: number;
  pendingStarts: () => Promise<{ pending: number; oldestMs: number }>;
  door: () => Promise<DoorDecision>;
}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  app.use(livenessRoutes());
  app.use(readinessRoutes({ redis: deps.redis, regions: deps.regions, timeoutMs: deps.readyTimeoutMs, pendingStarts: deps.pendingStarts, door: deps.door }));
  app.use((_req, res) => {
    res.status(404).json({ error: 'Not found' });
  });
  return app;
}
