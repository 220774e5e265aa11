import express, { type Express, type Request } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { GatewayDeps } from '../bridge/gateway';
import type { AcceptDeps } from '../signals/acceptance';
import type { StatusDeps } from '../signals/status';
import { errorHandler, type Channel } from './errors';
import { accessLog, requestId } from './middleware';
import type { ConnectionCap } from './connections';
import { methodNotAllowed } from './method-not-allowed';
import { observe } from './observe';
import type { IngressMetrics } from '../metrics';
import { buildOpenApiDocument } from './openapi';
import { bridgeRoutes } from './routes/bridge';
import { bridgeSessionRoutes } from './routes/bridge-session';
import { docsRoutes } from './routes/docs';
import { landingRoutes } from './routes/landing';
import { dashboardRoutes } from './routes/dashboard';
import { livenessRoutes } from './routes/health';
import { signalRoutes } from './routes/signals';
import { webhookRoutes } from './routes/webhook';
import { ownerSessionRoutes } from './routes/owner-session';
import { ownerApiRoutes } from './routes/owner-api';
import { ownerActivityRoutes } from './routes/owner-activity';
import type { DashboardParts } from '../owners/wiring';
import { downloadRoutes, ownerDownloadRoutes } from './routes/downloads';
import { Mt5Packages } from '../downloads/mt5-package';
import { ownerSurfaceHeaders } from './owner-auth';

export interface AppDeps {
  config: Config;
  logger: Logger;
  redis: Redis;
  accept: AcceptDeps;
  status: StatusDeps;
  gateway: GatewayDeps;
  metrics: IngressMetrics;
  /** The owners' dashboard and API; absent without OWNER_SECRETS_KEY_FILE (they answer 503). */
  owners?: DashboardParts;
  /** Connections past the per-IP cap are answered 503 before anything else (src/http/connections.ts). */
  connectionCap?: ConnectionCap;
  /** The MT5 bridge package served (default: dist/mt5-bridge beside the code, read on first use). */
  mt5Packages?: Mt5Packages;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // Which peer address is the client's: the socket's, unless TRUST_PROXY names the proxies in front (docs/deployment.md).
  app.set('trust proxy', deps.config.trustProxy);
  app.use(requestId());
  app.use(accessLog(deps.logger));
  app.use(observe(deps.metrics));
  if (deps.connectionCap) app.use(deps.connectionCap.refuseOverCap());
  // /metrics and /readyz are on the admin listener (src/http/admin.ts); liveness says nothing, so it stays here too.
  app.use(livenessRoutes());
  app.use(webhookRoutes({ accept: deps.accept, redis: deps.redis, config: deps.config }));
  app.use(signalRoutes({ status: deps.status, redis: deps.redis, config: deps.config }));
  app.use(
    bridgeRoutes(deps.gateway, {
      redis: deps.redis,
      keyPrefix: deps.config.limits.keyPrefix,
      limit: deps.config.bridge.limit,
      bodyReadTimeoutMs: deps.config.ingress.bodyReadTimeoutMs,
    }),
  );
  app.use(
    bridgeSessionRoutes(deps.gateway, { redis: deps.redis, keyPrefix: deps.config.limits.keyPrefix, bodyReadTimeoutMs: deps.config.ingress.bodyReadTimeoutMs }),
  );
  const mt5Packages =
    deps.mt5Packages ??
    new Mt5Packages(
      undefined,
      onceEach((message) => deps.logger.error({ problem: message }, 'MT5 bridge package unavailable')),
    );
  app.use(downloadRoutes(mt5Packages));
  const ownerHeaders = ownerSurfaceHeaders({ secure: deps.config.owners.secureCookies });
  app.use('/v1/owner', ownerHeaders.api);
  app.use('/dashboard', ownerHeaders.pages);
  if (deps.owners) {
    app.use(ownerDownloadRoutes(deps.owners.mt5Package, mt5Packages));
    app.use(ownerSessionRoutes(deps.owners.session));
    app.use(ownerActivityRoutes(deps.owners.activity));
    app.use(ownerApiRoutes(deps.owners.api));
    app.use(dashboardRoutes());
  } else {
    app.use(['/v1/owner', '/dashboard'], (_req, res) => {
      res.status(503).json({ error: 'dashboard_not_configured', message: 'The owners dashboard needs OWNER_SECRETS_KEY_FILE (docs/owners.md)' });
    });
  }
  app.get('/openapi.json', (_req, res) => {
    res.json(buildOpenApiDocument());
  });
  app.use(docsRoutes());
  app.use(landingRoutes());
  app.use(methodNotAllowed(app));
  app.use((_req, res) => {
    res.status(404).json({ error: 'Not found' });
  });
  app.use(errorHandler(deps.logger, deps.config.limits.failClosedRetryAfterSeconds, channelOf));
  return app;
}

/** The same problem logged once, not on every request that meets it. */
function onceEach(log: (message: string) => void): (message: string) => void {
  const seen = new Set<string>();
  return (message) => {
    if (seen.has(message) || seen.size > 100) return;
    seen.add(message);
    log(message);
  };
}

function channelOf(req: Request): Channel {
  if (req.path.startsWith('/webhook/')) return 'ingestion';
  if (req.path.startsWith('/bridge/')) return 'bridge';
  if (req.path.startsWith('/v1/owner')) return 'owner';
  return 'poll';
}
