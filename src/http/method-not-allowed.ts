import type { Express, RequestHandler } from 'express';

interface RouteLayer {
  route?: { methods: Record<string, boolean> };
  handle?: { stack?: RouteLayer[] };
  match(path: string): unknown;
}

/**
 * A path we serve, asked with a method we do not: 405 with `Allow` (RFC 9110 §15.5.6) instead of a 404 that reads as
 * "no such thing". The methods are read from the app's own routes (top level and one router deep), so the answer
 * cannot drift from what is served. Mounted after every route and before the 404.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  const allowed = (path: string): Set<string> => {
    const methods = new Set<string>();
    const visit = (layers: RouteLayer[] | undefined) => {
      for (const layer of layers ?? []) {
        if (layer.route) {
          if (layer.match(path)) for (const m of Object.keys(layer.route.methods)) methods.add(m.toUpperCase());
        } else if (layer.handle?.stack) visit(layer.handle.stack);
      }
    };
    visit((app as unknown as { router: { stack: RouteLayer[] } }).router.stack);
    if (methods.has('GET')) methods.add('HEAD');
    return methods;
  };
  return (req, res, next) => {
    const methods = allowed(req.path);
    if (methods.size === 0 || methods.has(req.method)) {
      next();
      return;
    }
    const allow = [...methods].sort().join(', ');
    res.set('Allow', allow);
    if (req.method === 'OPTIONS') return res.status(204).end();
    res.status(405).json({ error: 'Method not allowed', allow: [...methods].sort() });
  };
}
