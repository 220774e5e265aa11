/**
 * The owners' signals page with 10,000 signals in the store (issue 16: "renders in ≤ 1 s"): the store of
 * bench/signal-store.ts, the real ingress in this process (startIngress, with a fresh OWNER_SECRETS_KEY_FILE and
 * plain-http cookies), the store's owner given a sign-in as an operator and owner do (admin `owner create`, then
 * setup/begin and setup/complete with a TOTP code), and Debian's chromium (playwright-core) opening
 * /dashboard/signals with that session: navigation start → the frame showing the first row of table#signals (the
 * first page of 25), in a fresh browser context (empty cache) and again after a reload (warm), REPEAT times.
 *
 *   npm run build && node dist/bench/dashboard-page.js        # SIGNALS=10000 REPEAT=10 by default
 *
 * SIGNAL_LOG_BENCH_DB=<file> keeps the store for the next run (bench/signal-store.ts). Also printed: the script and
 * stylesheet as served and gzipped, and the CPU the machine, this process (bench and ingress), chromium, Temporal
 * and Redis, and everybody else used while the browser ran. Results: bench/results/dashboard-page-<timestamp>.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import type { Browser } from 'playwright-core';
import { REPO_ROOT } from '../support/infra';
import { launchChromium } from '../support/chromium';
import { ownerKeyFile, setUpOwner } from '../support/owner-sign-in';
import { get } from '../support/http';
import { processTable } from '../support/proc';
import { loadConfig } from '../src/config';
import { startIngress, type Ingress } from '../src/server';
import { RedisRegistry } from '../src/registry/registry';
import { importRegistry } from '../src/registry/import';
import { newCredential } from '../src/registry/credentials';
import { openSignalStore, type SignalStore } from './signal-store';
import { firstRowProbe, timeFirstRow, type PageTiming } from './page-timing';
import { cpuSnapshot, cpuUsage, describeCpu } from './cpu';
import { medianP95, round } from './stats';

const SIGNALS = Number(process.env.SIGNALS ?? 10_000);
const REPEAT = Number(process.env.REPEAT ?? 10);
const FIRST_ROW = 'table#signals tbody tr';
const log = (line: string) => process.stdout.write(`${line}\n`);

/** The store's owner as the registry knows them: their five accounts (the page's account filter lists them). */
async function registerAccounts(store: SignalStore): Promise<void> {
  const redis = new Redis(store.redisServer.url);
  try {
    const accounts = store.a.accounts.map((id) => ({
      id,
      owner: store.a.owner,
      platform: 'mt5' as const,
      bridgeVersion: '2.0.0',
      bridgeToken: newCredential('brg'),
    }));
    await importRegistry(new RedisRegistry(redis), { accounts, secrets: [], tokens: [] });
  } finally {
    redis.disconnect();
  }
}

/** The script and stylesheet the shell links to, as the ingress serves them, and gzipped (as a compressing proxy would). */
async function assetSizes(ingressUrl: string) {
  const shell = await get(`${ingressUrl}/dashboard/signals`);
  const links = [...shell.text.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  const sizes: Record<string, { bytes: number; gzipBytes: number; contentEncoding: string | null }> = {
    'index.html': { bytes: Buffer.byteLength(shell.text), gzipBytes: gzipSync(shell.text).length, contentEncoding: shell.headers.get('content-encoding') },
  };
  for (const link of links) {
    const res = await get(`${ingressUrl}${link}`, { 'accept-encoding': 'gzip' });
    if (res.status !== 200) throw new Error(`${link}: ${res.status}`);
    sizes[path.basename(link.split('?')[0]!)] = {
      bytes: Buffer.byteLength(res.text),
      gzipBytes: gzipSync(res.text).length,
      contentEncoding: res.headers.get('content-encoding'),
    };
  }
  return sizes;
}

/** The page's signals request alone, from Node with the session cookie and no browser running: the server's share. */
async function signalsRequestAlone(ingressUrl: string, cookie: string) {
  const ms: number[] = [];
  for (let i = -1; i < REPEAT; i++) {
    const t0 = performance.now();
    const res = await get(`${ingressUrl}/v1/owner/signals`, { cookie });
    if (res.status !== 200 || res.body.signals.length !== 25) throw new Error(`GET /v1/owner/signals: ${res.status} ${res.text.slice(0, 200)}`);
    if (i >= 0) ms.push(performance.now() - t0);
  }
  return medianP95(ms);
}

/** Chromium's own process group: playwright starts it detached, and its helpers stay in the group. */
function chromiumGroup(): number {
  return processTable().find((p) => p.ppid === process.pid && p.cmd.includes('chrom'))?.pid ?? -1;
}

async function measure(browser: Browser, ingressUrl: string, cookie: string) {
  const [name, value] = [cookie.slice(0, cookie.indexOf('=')), cookie.slice(cookie.indexOf('=') + 1)];
  const url = `${ingressUrl}/dashboard/signals`;
  const cold: PageTiming[] = [];
  const warm: PageTiming[] = [];
  // One load first, untimed: the ingress's and Temporal's first requests after a start (JIT, connections) are not the page's.
  for (let i = -1; i < REPEAT; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      await context.addCookies([{ name, value, url: ingressUrl }]);
      await context.addInitScript({ content: firstRowProbe(FIRST_ROW) });
      const page = await context.newPage();
      const first = await timeFirstRow(page, FIRST_ROW, () => page.goto(url, { waitUntil: 'commit' }));
      const again = await timeFirstRow(page, FIRST_ROW, () => page.reload({ waitUntil: 'commit' }));
      if (first.rows !== 25 || again.rows !== 25) throw new Error(`expected the first page of 25 rows, saw ${first.rows} and ${again.rows}`);
      if (i < 0) continue;
      cold.push(first);
      warm.push(again);
      log(`repeat ${i + 1}: first row ${round(first.firstRowShownMs, 0)} ms (empty cache), ${round(again.firstRowShownMs, 0)} ms (reload)`);
    } finally {
      await context.close();
    }
  }
  return { cold, warm };
}

/** Medians and p95 of each figure of a set of page loads, and each API request's own time. */
function summary(loads: PageTiming[]) {
  const apiPaths = [...new Set(loads.flatMap((l) => l.api.map((a) => a.path)))];
  return {
    firstRowShown: medianP95(loads.map((l) => l.firstRowShownMs)),
    firstRowInDom: medianP95(loads.map((l) => l.firstRowInDomMs)),
    domContentLoaded: medianP95(loads.map((l) => l.domContentLoadedMs)),
    api: Object.fromEntries(apiPaths.map((p) => [p, medianP95(loads.flatMap((l) => l.api.filter((a) => a.path === p).map((a) => a.endMs - a.startMs)))])),
  };
}

async function main() {
  const store = await openSignalStore(SIGNALS, log);
  let ingress: Ingress | undefined;
  let browser: Browser | undefined;
  try {
    await registerAccounts(store);
    ingress = await startIngress(
      loadConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        ADMIN_PORT: 'off',
        LOG_LEVEL: 'warn',
        REDIS_URL: store.redisServer.url,
        TEMPORAL_ADDRESS: store.temporal.address,
        OWNER_SECRETS_KEY_FILE: ownerKeyFile(),
        DASHBOARD_SECURE_COOKIES: 'false',
      }),
    );
    const owner = await setUpOwner(ingress.url, store.redisServer.url, store.a.owner);
    const assets = await assetSizes(ingress.url);
    log(`assets: ${JSON.stringify(assets)}`);
    const signalsAlone = await signalsRequestAlone(ingress.url, owner.cookie);
    log(`GET /v1/owner/signals from Node, no browser: ${JSON.stringify(signalsAlone)}`);
    browser = await launchChromium();
    const groups = () => ({ temporal: store.temporal.pid, redis: store.redisServer.pid, chromium: chromiumGroup() });
    const loadBefore = os.loadavg();
    const before = cpuSnapshot(groups());
    const { cold, warm } = await measure(browser, ingress.url, owner.cookie);
    const cpu = cpuUsage(before, cpuSnapshot(groups()));
    log(`${describeCpu(cpu)} (bench+load is this process: the bench and the ingress)`);
    const results = {
      signals: store.a.signalIds.length,
      otherOwner: store.b.signalIds.length,
      repeat: REPEAT,
      reused: store.reused,
      emptyCache: summary(cold),
      reload: summary(warm),
      assets,
      signalsAlone,
      cpu,
      loadavg: { before: loadBefore.map((v) => round(v)), after: os.loadavg().map((v) => round(v)) },
      samples: { emptyCache: cold, reload: warm },
    };
    log(`empty cache: ${JSON.stringify(results.emptyCache)}`);
    log(`reload:      ${JSON.stringify(results.reload)}`);
    const file = path.join(REPO_ROOT, 'bench', 'results', `dashboard-page-${new Date().toISOString().replace(/[:]/g, '-')}.json`);
    fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    log(`results: ${path.relative(REPO_ROOT, file)}`);
  } finally {
    await browser?.close();
    await ingress?.close();
    await store.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
  process.exit(1);
});
