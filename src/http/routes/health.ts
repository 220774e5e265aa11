import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Regions } from '../../temporal/regions';
import type { DoorDecision } from '../../signals/door';

/** /healthz: the process answers. It says nothing else, so it may be served on the public listener too. */
export function livenessRoutes(): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  return router;
}

/**
 * /readyz: Redis and every region's Temporal answer within a short deadline. It names which dependency is down, so it
 * is served on the admin listener only. Beside the checks, the accepted signals whose workflow is not started yet
 * (src/signals/pending-starts.ts): a Temporal outage does not refuse signals, and this is where its backlog shows; and
 * the door: `open`, or why new signals are refused (src/signals/door.ts).
 */
export function readinessRoutes(deps: {
  redis: Redis;
  regions: Regions;
  timeoutMs: number;
  pendingStarts: () => Promise<{ pending: number; oldestMs: number }>;
  door: () => Promise<DoorDecision>;
}): Router {
  const router = Router();
  router.get('/readyz', async (_req, res) => {
    const checks: Record<string, 'ok' | 'down'> = {};
    const probe = async (name: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
        checks[name] = 'ok';
      } catch {
        checks[name] = 'down';
      }
    };
    await Promise.all([
      probe('redis', () => deps.redis.ping()),
      ...deps.regions
        .names()
        .map((region) =>
          probe(`temporal:${region}`, () => deps.regions.call(region, (client) => client.workflowService.getSystemInfo({}), Date.now() + deps.timeoutMs)),
        ),
    ]);
    const ready = Object.values(checks).every((c) => c === 'ok');
    const pendingStarts = checks.redis === 'ok' ? await deps.pendingStarts().catch(() => undefined) : undefined;
    const door = await deps.door();
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : 'not_ready',
      checks,
      ...(pendingStarts ? { pendingStarts } : {}),
      door: door.admitted ? 'open' : door.reason,
    });
  });
  return router;
}
