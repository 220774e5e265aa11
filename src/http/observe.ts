import type { RequestHandler } from 'express';
import type { IngressMetrics } from '../metrics';
import { routeOf } from './middleware';

/** Counts every request by route pattern (never the raw path: it carries ids) and times webhook submissions. */
export function observe(metrics: IngressMetrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = routeOf(req) ?? 'unmatched';
      const status = String(res.statusCode);
      metrics.requests.inc({ route, method: req.method, status });
      if (route.startsWith('/webhook/custom')) {
        const url = route === '/webhook/custom' ? 'broadcast' : 'account';
        metrics.acceptSeconds.observe({ url, status }, Number(process.hrtime.bigint() - started) / 1e9);
      }
    });
    next();
  };
}
