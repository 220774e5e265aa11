import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Router, type Response } from 'express';

/**
 * GET /docs: the API reference, rendered in the browser by Swagger UI (swagger-ui-dist) from GET /openapi.json.
 * Everything the page loads comes from this server: the renderer's bundle and stylesheet straight out of
 * node_modules, and a small start script of our own (a script file, so the page needs no inline script). No CDN, no
 * fonts, no analytics; the Content-Security-Policy below enforces that in the browser.
 *
 * Asset URLs carry a version (?v=), so they are cached for a year as immutable; the page itself is revalidated on
 * every load, so an upgrade of swagger-ui-dist or of the start script is picked up at once.
 */

const DOCS_TITLE = 'External Signals API';

/**
 * As tight as Swagger UI works with (test/integration/docs-page.test.ts fails on any CSP violation):
 * scripts, styles and requests only from this origin; images also from data: URIs (the stylesheet's icons are
 * inline SVG/PNG); nothing else at all. React sets style props through the CSSOM, which style-src does not govern,
 * so no 'unsafe-inline' is needed. The page cannot be framed and posts no forms.
 */
export const DOCS_CSP = ownPagesCsp("form-action 'none'");

/** The policy of the pages we serve (docs, dashboard): everything from this origin only, images also from data:. */
export function ownPagesCsp(formAction: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    formAction,
    "frame-ancestors 'none'",
  ].join('; ');
}

const PACKAGE = 'swagger-ui-dist';

/** The start script: Swagger UI's plain layout (no top bar, no "Explore" box) on our document, no online validator. */
const START_SCRIPT = `'use strict';
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  presets: [SwaggerUIBundle.presets.apis],
  deepLinking: true,
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
});
`;

const PAGE_STYLE = `body { margin: 0; background: #fafafa; }
`;

interface Asset {
  /** The route, also the URL the page links (with ?v=version). */
  path: string;
  contentType: string;
  version: string;
  /** A file to stream (the renderer's, from node_modules) or our own small text. */
  file?: string;
  body?: string;
}

const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';

function rendererFile(name: string): string {
  return require.resolve(`${PACKAGE}/${name}`);
}

function rendererVersion(): string {
  return (JSON.parse(readFileSync(rendererFile('package.json'), 'utf8')) as { version: string }).version;
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

function buildAssets(): { script: Asset; style: Asset; start: Asset; pageStyle: Asset } {
  const version = rendererVersion();
  return {
    script: { path: '/docs/assets/swagger-ui-bundle.js', contentType: 'text/javascript; charset=utf-8', version, file: rendererFile('swagger-ui-bundle.js') },
    style: { path: '/docs/assets/swagger-ui.css', contentType: 'text/css; charset=utf-8', version, file: rendererFile('swagger-ui.css') },
    start: { path: '/docs/assets/docs.js', contentType: 'text/javascript; charset=utf-8', version: hashOf(START_SCRIPT), body: START_SCRIPT },
    pageStyle: { path: '/docs/assets/docs.css', contentType: 'text/css; charset=utf-8', version: hashOf(PAGE_STYLE), body: PAGE_STYLE },
  };
}

const href = (asset: Asset) => `${asset.path}?v=${encodeURIComponent(asset.version)}`;

function page(assets: ReturnType<typeof buildAssets>): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${DOCS_TITLE}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${href(assets.style)}">
<link rel="stylesheet" href="${href(assets.pageStyle)}">
</head>
<body>
<noscript>${DOCS_TITLE}: this page needs JavaScript. The machine-readable description is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="${href(assets.script)}"></script>
<script src="${href(assets.start)}"></script>
</body>
</html>
`;
}

/** The headers every page of ours carries (docs, landing, guides). */
export function securityHeaders(res: Response): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

export function docsRoutes(): Router {
  const assets = buildAssets();
  const html = page(assets);
  const router = Router();

  router.get('/docs', (_req, res) => {
    securityHeaders(res);
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(html);
  });

  for (const asset of Object.values(assets)) {
    // One fixed route per asset: no file name ever comes from the request.
    router.get(asset.path, (_req, res, next) => {
      securityHeaders(res);
      res.setHeader('Content-Type', asset.contentType);
      if (asset.body !== undefined) {
        res.setHeader('Cache-Control', CACHE_IMMUTABLE);
        res.send(asset.body);
        return;
      }
      // sendFile streams with ETag/Last-Modified and Range; it would set Cache-Control from maxAge, so it is off here.
      res.sendFile(asset.file!, { cacheControl: false, headers: { 'Cache-Control': CACHE_IMMUTABLE } }, (err) => {
        if (err && !res.headersSent) next(err);
      });
    });
  }
  return router;
}
