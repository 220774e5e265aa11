import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Router, type Response } from 'express';
import { ownPagesCsp } from './docs';

/**
 * The owners' dashboard pages (docs/owners.md): one HTML shell for every /dashboard path, a stylesheet and a few
 * script modules of our own (dashboard/, no framework, no build step), all served from here with a strict CSP: nothing from any
 * other host, no inline script or style. Every page is a view of the owner API; the script keeps no secret (the
 * session cookie is HttpOnly; the CSRF token is read from GET /v1/owner/session).
 */
// The filter form of the signals page submits to this origin (a GET of the page itself).
export const DASHBOARD_CSP = ownPagesCsp("form-action 'self'");

const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';

/** The dashboard/ folder: beside src/ when run from source, beside dist/ when built. */
function dashboardDir(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dashboard');
    if (existsSync(path.join(candidate, 'index.html'))) return candidate;
  }
  throw new Error('the dashboard/ folder (index.html, dashboard.js, dashboard.css) is missing');
}

function securityHeaders(res: Response): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

export function dashboardRoutes(): Router {
  const dir = dashboardDir();
  const scripts = [
    'dashboard.js',
    'dom.js',
    'sign-in-pages.js',
    'account-pages.js',
    'credentials-page.js',
    'account-connect.js',
    'form-controls.js',
    'risk-form.js',
    'risk-form-model.js',
    'trade-model.js',
    'trade-day.js',
    'trade-pages.js',
    'activity-pages.js',
    'mt5-package.js',
    'ctrader-pages.js',
  ];
  const raw = [...scripts.map((name) => ({ name, type: 'text/javascript; charset=utf-8' })), { name: 'dashboard.css', type: 'text/css; charset=utf-8' }].map(
    (a) => ({ ...a, body: readFileSync(path.join(dir, a.name), 'utf8') }),
  );
  const version = createHash('sha256')
    .update(raw.map((a) => a.body).join('\0'))
    .digest('hex')
    .slice(0, 12);
  // The modules import each other with the version in the URL too, so every file of a release is cached as immutable.
  const assets = raw.map((a) => ({ ...a, body: a.body.replaceAll('__VERSION__', version) }));
  const html = readFileSync(path.join(dir, 'index.html'), 'utf8').replaceAll('__VERSION__', version);
  const router = Router();
  // The setup link's token is in the URL fragment, which no request carries; the rest of the path picks the page.
  router.get(['/dashboard', '/dashboard/{*page}'], (req, res, next) => {
    if (req.path.startsWith('/dashboard/assets/')) {
      next();
      return;
    }
    securityHeaders(res);
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(html);
  });
  for (const asset of assets) {
    router.get(`/dashboard/assets/${asset.name}`, (_req, res) => {
      securityHeaders(res);
      res.setHeader('Content-Type', asset.type);
      res.setHeader('Cache-Control', CACHE_IMMUTABLE);
      res.send(asset.body);
    });
  }
  return router;
}
