import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Router } from 'express';
import { Refusal } from '../../refusal';
import { ownPagesCsp, securityHeaders } from './docs';

/**
 * The service's front door and the guides it serves. `GET /` is a small page linking the dashboard, the API
 * reference, the guides and /healthz (the address the start banner prints answers something useful). The guides are
 * a fixed list of the repository's docs/ pages a self-hoster needs while connecting an account, served as plain text
 * at /docs/guides/<name>.md (the dashboard links them; no file name ever comes from the request).
 */
const GUIDES = ['ctrader-connector.md', 'mt5-bridge.md', 'owners.md'] as const;
type Guide = (typeof GUIDES)[number];
const guideUrl = (name: Guide, anchor?: string) => `/docs/guides/${name}${anchor ? `#${anchor}` : ''}`;

const LANDING_CSP = ownPagesCsp("form-action 'none'");

/** docs/ beside src/ when run from source, beside dist/ when built (the image copies it). */
function docsDir(): string | undefined {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'docs');
    if (existsSync(path.join(candidate, GUIDES[0]))) return candidate;
  }
  return undefined;
}

const LANDING = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>External Signals Service</title>
<link rel="icon" href="data:,">
</head>
<body>
<main>
<h1>External Signals Service</h1>
<ul>
<li><a href="/dashboard">Dashboard</a>: your accounts, signals, secrets and tokens</li>
<li><a href="/docs">API reference</a> (the OpenAPI document: <a href="/openapi.json">/openapi.json</a>)</li>
${GUIDES.map((g) => `<li><a href="${guideUrl(g)}">docs/${g}</a></li>`).join('\n')}
<li><a href="/healthz">/healthz</a>: this process answers</li>
</ul>
</main>
</body>
</html>
`;

export function landingRoutes(): Router {
  const router = Router();
  router.get('/', (_req, res) => {
    securityHeaders(res);
    res.setHeader('Content-Security-Policy', LANDING_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(LANDING);
  });
  const dir = docsDir();
  for (const name of GUIDES) {
    router.get(guideUrl(name), (_req, res) => {
      securityHeaders(res);
      res.setHeader('Cache-Control', 'no-cache');
      if (dir === undefined) throw new Refusal('not_found', `docs/${name} is not installed beside this server`);
      res.type('text/plain; charset=utf-8').send(readFileSync(path.join(dir, name), 'utf8'));
    });
  }
  return router;
}
