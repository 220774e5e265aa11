import { Router, type Response } from 'express';
import { ownerCaller } from '../proven';
import { Refusal } from '../../refusal';
import { configUrl, loopbackWarning, packageFileName, type Mt5Package, type Mt5Packages } from '../../downloads/mt5-package';
import type { OwnerAuthDeps } from '../../owners/sign-in';
import { personalMt5Package, type OwnerMt5PackageDeps } from '../../owners/mt5-package';
import { ownerAuth, requireJson, signedInVia, type CookieSettings } from '../owner-auth';

/**
 * The MT5 bridge package (docs/mt5-bridge.md). Public, at stable URLs of this service: the current package (its
 * config a template to fill in), the same under its versioned name, and what the current version is. It holds no
 * secret. The personal copy, with this service's URL and a new bridge token in its config, is an owner API call.
 */
const MT5_DOWNLOADS = '/downloads/mt5-bridge';

function current(packages: Mt5Packages): Mt5Package {
  const pkg = packages.current();
  if (!pkg) throw new Refusal('not_available', 'The MT5 bridge package is not built on this server; ask the operator (make dist, docs/mt5-bridge.md)');
  return pkg;
}

function sendZip(res: Response, fileName: string, body: Buffer, cache: string): void {
  res.setHeader('Content-Type', 'application/zip');
  res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`);
  res.setHeader('Cache-Control', cache);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.send(body);
}

export function downloadRoutes(packages: Mt5Packages): Router {
  const router = Router();
  router.get(`${MT5_DOWNLOADS}/latest.json`, (_req, res) => {
    const { manifest } = current(packages);
    res.setHeader('Cache-Control', 'no-cache');
    res.json({ version: manifest.version, file: manifest.zip, url: `${MT5_DOWNLOADS}/${manifest.zip}`, sha256: manifest.sha256 });
  });
  router.get(`${MT5_DOWNLOADS}/latest.zip`, (_req, res) => {
    const pkg = current(packages);
    sendZip(res, pkg.manifest.zip, pkg.zip, 'no-cache');
  });
  router.get(`${MT5_DOWNLOADS}/:file`, (req, res) => {
    const pkg = current(packages);
    // Only the current version is kept: an older one is gone, like a name that never was.
    if (req.params.file !== packageFileName(pkg.manifest.version))
      throw new Refusal('not_found', `Only ${pkg.manifest.zip} is served; ${MT5_DOWNLOADS}/latest.zip is always the current one`);
    sendZip(res, pkg.manifest.zip, pkg.zip, 'public, max-age=31536000, immutable');
  });
  return router;
}

/** POST /v1/owner/accounts/{accountId}/mt5-package: the owner API's personal package (a new bridge token each time). */
export interface OwnerDownloadDeps extends OwnerMt5PackageDeps {
  auth: OwnerAuthDeps;
  cookies: CookieSettings;
}

export function ownerDownloadRoutes(deps: OwnerDownloadDeps, packages: Mt5Packages): Router {
  const router = Router();
  const path = '/v1/owner/accounts/:accountId/mt5-package';
  router.use(path, ownerAuth(deps.auth, deps.cookies), requireJson);
  router.post(path, async (req, res) => {
    const made = await personalMt5Package(deps, packages, ownerCaller.get(res).owner, req.params.accountId, signedInVia(res));
    sendZip(res, made.fileName, made.zip, 'no-store');
  });
  // What the package's config will hold, read by the account page before the download (a loopback address warned of).
  const settings = '/v1/owner/mt5-package';
  router.use(settings, ownerAuth(deps.auth, deps.cookies), requireJson);
  router.get(settings, (_req, res) => {
    const serviceUrl = configUrl(deps.publicUrl) ?? null;
    res.json({ serviceUrl, warning: serviceUrl === null ? null : loopbackWarning(serviceUrl) });
  });
  return router;
}
