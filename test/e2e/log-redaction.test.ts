import fs from 'node:fs';
import path from 'node:path';
import { newCredential } from '../../src/registry/credentials';
import { testEnv } from '../../support/env';
import { waitFor } from '../../support/infra';
import {
  ensureBuilt,
  httpGet as get,
  httpPost as post,
  processLogDir,
  serviceEnv,
  startIngressProcess,
  startPaperBridgeProcess,
  startWorkerProcess,
  type HttpResult,
  type ServiceProcess,
} from '../../support/processes';
import { importRegistry, writeRegistry, type RegistryFile } from './support';
import { mt5AndCtraderOwner } from '../helpers/registry';
import { temporalClient, workflowResult } from '../helpers/temporal';

/**
 * No credential ever reaches a log. The built processes run at LOG_LEVEL=debug (ingress, worker, paper bridge) through
 * a full run that puts the webhook secret, the API token and the bridge tokens everywhere a caller can put them,
 * right and wrong: valid submissions, a wrong secret, a malformed body, an over-long body, invalid fields holding the
 * secret, polls with the right and a wrong token, bridge calls with the right and a wrong bridge token. Then every log
 * file of the run (stdout and stderr of every process, the admin CLI's log, Temporal's and Redis's logs) is searched
 * for each of those values. Also: every ingress log line about a request carries its correlationId.
 */

const { tag, mt5, secret, token, accounts, doc: registryDoc } = mt5AndCtraderOwner('logs');
const bridgeTokens = { mt5: accounts[0]!.bridgeToken, ctrader: accounts[1]!.bridgeToken };
const wrongSecret = newCredential('whsec');
const wrongToken = newCredential('tok');
const wrongBridgeToken = newCredential('brg');

/** What must never be written to a log, by name (the names, never the values, go into failure messages). */
const NEEDLES: Record<string, string> = {
  'webhook secret': secret,
  'API token': token,
  'mt5 bridge token': bridgeTokens.mt5,
  'cTrader bridge token': bridgeTokens.ctrader,
  'wrong webhook secret': wrongSecret,
  'wrong API token': wrongToken,
  'wrong bridge token': wrongBridgeToken,
};
/** The random part alone too (a log that cut the prefix off, or the first half of it, is still a leak). */
for (const [name, value] of Object.entries({ ...NEEDLES })) NEEDLES[`${name} (first 20 random characters)`] = value.slice(value.indexOf('_') + 1).slice(0, 20);

function logFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...logFilesUnder(p));
    else if (e.name.endsWith('.log')) out.push(p);
  }
  return out;
}

describe('credentials never reach the logs, at LOG_LEVEL=debug', () => {
  let registry: RegistryFile;
  let ledgerFile: string;
  const procs: ServiceProcess[] = [];
  let ingressUrl: string;
  let ingress: ServiceProcess;
  /** Every response of the run: its X-Request-ID and status. */
  const responses: { what: string; requestId: string | null; status: number; body: unknown; text: string }[] = [];
  const signalIds: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    registry = writeRegistry(registryDoc, 'logs');
    const dir = path.join(processLogDir(), `logs-${tag}`);
    fs.mkdirSync(dir, { recursive: true });
    ledgerFile = path.join(dir, 'ledger.jsonl');
    expect(await importRegistry(registry.file)).toEqual({ accounts: 2, secrets: 1, tokens: 1 });
    const env = serviceEnv({ LOG_LEVEL: 'debug' });
    const [worker, ing] = await Promise.all([startWorkerProcess(env, { label: 'worker' }), startIngressProcess(env, { label: 'ingress' })]);
    procs.push(worker, ing);
    ingress = ing;
    ingressUrl = ing.url;
    procs.push(await startPaperBridgeProcess({ registryFile: registry.file, ledgerFile, ingressUrl, env: { LOG_LEVEL: 'debug' }, label: 'paper-bridge' }));
  }, 120_000);

  afterAll(async () => {
    for (const p of [...procs].reverse()) await p.stop();
    registry?.remove();
  });

  const record = (what: string, res: HttpResult): HttpResult => {
    responses.push({ what, requestId: res.headers.get('x-request-id'), status: res.status, body: res.body, text: res.text });
    return res;
  };

  test('a full run with every credential in play, right and wrong, answers as the contract says', async () => {
    const hook = `${ingressUrl}/webhook/custom`;
    const buy = record('buy on mt5', await post(`${hook}/${mt5}`, { secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 50 }));
    expect(buy.status).toBe(202);
    const broadcast = record(
      'broadcast sell',
      await post(hook, { secret, action: 'sell', symbol: 'GBPUSD', volume: 0.1 }, { 'x-request-id': `caller-${tag}` }),
    );
    expect(broadcast.status).toBe(202);
    expect(broadcast.headers.get('x-request-id')).toBe(`caller-${tag}`);
    expect(broadcast.body.correlationId).toBe(`caller-${tag}`);
    signalIds.push(buy.body.signalId, broadcast.body.signalId);
    const closeAll = record('close_all broadcast', await post(hook, { secret, action: 'close_all' }, { 'x-idempotency-key': `k-${tag}` }));
    expect(closeAll.status).toBe(202);
    signalIds.push(closeAll.body.signalId);

    expect(record('wrong secret', await post(`${hook}/${mt5}`, { secret: wrongSecret, action: 'buy', symbol: 'EURUSD', volume: 0.1 })).status).toBe(401);
    expect(record('wrong secret, broadcast', await post(hook, { secret: wrongSecret, action: 'buy', symbol: 'EURUSD', volume: 0.1 })).status).toBe(401);
    expect(record('malformed body', await post(hook, `{"secret":"${secret}","action":"buy","symbol":"EURUSD",`)).status).toBe(400);
    expect(record('malformed body, wrong secret', await post(`${hook}/${mt5}`, `{"secret":"${wrongSecret}",`)).status).toBe(400);
    const long = JSON.stringify({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, meta: { origin: 'x', pad: `${secret} `.repeat(1_500) } });
    expect(long.length).toBeGreaterThan(65_536);
    expect(record('over-long body', await post(hook, long)).status).toBe(413);
    // The secret where it does not belong: as a symbol, an action, an unknown field, a meta value.
    expect(record('secret as symbol', await post(hook, { secret, action: 'buy', symbol: secret, volume: 0.1 })).status).toBe(400);
    expect(record('secret as action', await post(hook, { secret, action: secret })).status).toBe(400);
    expect(record('secret in an unknown field', await post(hook, { secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, comment: secret })).status).toBe(400);
    expect(
      record('secret in meta', await post(`${hook}/${mt5}`, { secret, action: 'modify_sl', positionId: '1', sl: 1, meta: { origin: secret } })).status,
    ).toBe(400);
    expect(record('token as secret', await post(hook, { secret: token, action: 'buy', symbol: 'EURUSD', volume: 0.1 })).status).toBe(401);

    // The poll: right token until reported, a wrong one, the secret as a token, a malformed header.
    for (const id of signalIds.slice(0, 2)) {
      await waitFor(
        `signal ${id} reported`,
        async () => {
          const res = record('poll', await get(`${ingressUrl}/v1/signals/${id}`, { authorization: `Bearer ${token}` }));
          expect(res.status).toBe(200);
          return res.body.status === 'reported' ? res.body : undefined;
        },
        15_000,
        100,
      );
    }
    expect(record('poll, wrong token', await get(`${ingressUrl}/v1/signals/${signalIds[0]}`, { authorization: `Bearer ${wrongToken}` })).status).toBe(401);
    expect(record('poll, secret as token', await get(`${ingressUrl}/v1/signals/${signalIds[0]}`, { authorization: `Bearer ${secret}` })).status).toBe(401);
    expect(record('poll, token without Bearer', await get(`${ingressUrl}/v1/signals/${signalIds[0]}`, { authorization: token })).status).toBe(401);

    // The bridge API: a wrong bridge token; a right one with a refused body.
    expect(
      record(
        'bridge hello, wrong token',
        await post(`${ingressUrl}/bridge/v1/hello`, { platform: 'mt5', bridgeVersion: '2.1.0' }, { authorization: `Bearer ${wrongBridgeToken}` }),
      ).status,
    ).toBe(401);
    expect(
      record('bridge poll, wrong token', await get(`${ingressUrl}/bridge/v1/commands?waitMs=0`, { authorization: `Bearer ${wrongBridgeToken}` })).status,
    ).toBe(401);
    expect(
      record(
        'bridge hello, wrong platform',
        await post(`${ingressUrl}/bridge/v1/hello`, { platform: 'ctrader', bridgeVersion: '2.1.0' }, { authorization: `Bearer ${bridgeTokens.mt5}` }),
      ).status,
    ).toBe(400);
    expect(
      record(
        'bridge reports, malformed',
        await post(`${ingressUrl}/bridge/v1/reports`, `{"reports":[{"commandId":"${bridgeTokens.ctrader}"`, {
          authorization: `Bearer ${bridgeTokens.ctrader}`,
        }),
      ).status,
    ).toBe(400);

    // The close_all reached both bridges (a non-opening action: not on the poll; its line on the bridge's stdout).
    const bridge = procs[2] as ServiceProcess;
    await waitFor(
      'close_all handled on both accounts',
      async () => bridge.jsonLines('stdout').filter((l) => l.event === 'command' && l.action === 'close_all' && l.status === 'done').length === 2,
      15_000,
    );

    // No response echoes a credential back either (a 400 names fields, never values), and every ingestion error
    // body's correlationId is the response's X-Request-ID.
    for (const r of responses) {
      for (const [name, value] of Object.entries(NEEDLES)) {
        expect({ response: r.what, leaks: r.text.includes(value) ? name : null }).toEqual({ response: r.what, leaks: null });
      }
      const correlationId = (r.body as { correlationId?: unknown } | undefined)?.correlationId;
      if (correlationId !== undefined) expect({ response: r.what, correlationId }).toEqual({ response: r.what, correlationId: r.requestId });
    }
  }, 90_000);

  test('no credential is in the Temporal histories of the run', async () => {
    const temporal = await temporalClient();
    try {
      for (const id of signalIds) {
        for (const workflowId of [`signal/${id}`, `signal/${id}/account/${mt5}`]) {
          // Dispatch at acceptance: the bridge can be done before the workflows exist; read them once they closed.
          await workflowResult(temporal.client, workflowId);
          const history = JSON.stringify(await temporal.client.workflow.getHandle(workflowId).fetchHistory(), (_k, v: unknown) =>
            v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : typeof v === 'bigint' ? String(v) : v,
          );
          expect(history.length).toBeGreaterThan(1_000);
          for (const [name, value] of Object.entries(NEEDLES)) {
            expect({ workflowId, leaks: history.includes(value) ? name : null }).toEqual({ workflowId, leaks: null });
          }
        }
      }
    } finally {
      await temporal.close();
    }
  }, 60_000);

  test('after SIGTERM, no log file of the run holds any credential, and every ingress line about a request carries its correlationId', async () => {
    for (const p of [...procs].reverse()) expect({ name: p.name, exit: await p.stop() }).toEqual({ name: p.name, exit: { code: 0, signal: null } });

    // Not vacuous: the processes did log, and the ingress logged every request of the run.
    const ingressLines = ingress.jsonLines('stdout');
    const requestLines = ingressLines.filter((l) => l.msg === 'request');
    expect(requestLines.length).toBeGreaterThanOrEqual(responses.length);
    expect(procs[0]!.jsonLines('stdout').some((l) => l.msg === 'worker running')).toBe(true);

    const files = logFilesUnder(testEnv().runDir);
    const ours = [...procs.flatMap((p) => [p.stdoutFile, p.stderrFile]), path.join(processLogDir(), 'admin.log')];
    for (const f of ours) expect(files).toContain(f);
    const leaks: string[] = [];
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      for (const [name, value] of Object.entries(NEEDLES)) if (text.includes(value)) leaks.push(`${name} in ${path.relative(testEnv().runDir, file)}`);
    }
    expect(leaks).toEqual([]);
    console.log(
      `[log-redaction] searched ${files.length} log files (${files.reduce((n, f) => n + fs.statSync(f).size, 0)} bytes) for ${Object.keys(NEEDLES).length} values`,
    );

    // Every line the ingress wrote about a request (the access log, errors, warnings) carries a correlationId, and
    // every response's X-Request-ID is in the access log with the response's status.
    // Only the process-level lines (startup, a Redis connection warning) are about no request.
    const processLevel = new Set(['ingress listening', 'redis unavailable']);
    const aboutRequests = [...ingressLines, ...ingress.jsonLines('stderr')].filter((l) => !processLevel.has(String(l.msg)));
    expect(aboutRequests.length).toBeGreaterThanOrEqual(responses.length);
    for (const line of aboutRequests) {
      expect({ msg: line.msg, correlationId: typeof line.correlationId === 'string' && line.correlationId.length > 0 }).toEqual({
        msg: line.msg,
        correlationId: true,
      });
    }
    const logged = new Map(requestLines.map((l) => [l.correlationId as string, l.status]));
    for (const r of responses) {
      expect({ what: r.what, requestId: r.requestId, logged: r.requestId ? logged.get(r.requestId) : undefined }).toEqual({
        what: r.what,
        requestId: r.requestId,
        logged: r.status,
      });
    }
  }, 60_000);
});
