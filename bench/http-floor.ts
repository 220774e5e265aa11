/**
 * The bar close's floor: a bare `node:http` server that answers 202 after one Redis write of the size of the
 * service's accepted-signal write (the command the ingress queues at acceptance: src/signals/dispatch.ts, the JSON
 * RedisCommandQueue.enqueue stores), and nothing else: no limiter, no registry, no Temporal. What a bar close's
 * answers cannot cost less than with the same client (bench/burst.ts) on the same machine.
 *
 * Run as its own process (its own process group, so bench/cpu.ts counts its CPU apart):
 * `node dist/bench/http-floor.js SPEC.json READY_FILE`; it writes its port to READY_FILE once listening, and exits
 * when the parent goes away (its pipe to our stdin closes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { accountWorkflowId } from '../src/domain/ids';
import { RedisRegistry } from '../src/registry/registry';
import { commandFor } from '../src/risk/command';
import { accountSnapshot } from '../src/signals/launch';
import { REPO_ROOT } from './helpers';
import { baseEnv, StageError, tailFile } from './common';
import { liveChildren, stopChild } from './children';

interface HttpFloorSpec {
  redisUrl: string;
  /** An account of the registry: the command written is the one the service would queue for a market buy there. */
  accountId: string;
}

export interface HttpFloor {
  url: string;
  /** Its process group (= its pid), for bench/cpu.ts. */
  pgid: number;
  /** Bytes of each Redis write (the command's JSON). */
  writeBytes: number;
  stop: () => Promise<void>;
}

/** The JSON the service queues for one market buy on the account (same builder, same snapshot), with its ids. */
async function commandTemplate(redis: Redis, accountId: string): Promise<(signalId: string) => string> {
  const [account] = await new RedisRegistry(redis).getAccounts([accountId]);
  if (!account) throw new Error(`account ${accountId} is not in the registry`);
  const now = Date.now();
  const placeholder = `sig_${'0'.repeat(32)}`;
  const plan = commandFor(
    {
      signalId: placeholder,
      correlationId: `req_${'0'.repeat(24)}`,
      acceptedAt: new Date(now).toISOString(),
      signal: { action: 'buy', symbol: 'EURUSD', volume: 0.01 },
      target: { account: accountSnapshot(account), seq: 1_000_000, expiresAt: new Date(now + 30_000).toISOString() },
    },
    accountWorkflowId(placeholder, accountId),
    now,
  );
  if (!plan.ok) throw new Error(`no command for a market buy on ${accountId}: ${plan.reason}`);
  const json = JSON.stringify(plan.command);
  return (signalId) => json.split(placeholder).join(signalId);
}

async function main(): Promise<void> {
  const [specFile, readyFile] = process.argv.slice(2);
  if (!specFile || !readyFile) throw new Error('usage: http-floor.js SPEC.json READY_FILE');
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as HttpFloorSpec;
  process.stdin.on('end', () => process.exit(3));
  process.stdin.on('error', () => process.exit(3));
  process.stdin.resume();
  const redis = new Redis(spec.redisUrl, { connectionName: 'bench-http-floor', maxRetriesPerRequest: 1 });
  const command = await commandTemplate(redis, spec.accountId);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let ok = true;
      try {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        ok = false;
      }
      if (!ok) {
        res.writeHead(400).end();
        return;
      }
      const signalId = `sig_${randomBytes(16).toString('hex')}`;
      redis.set(`bench-floor:${signalId}`, command(signalId), 'PX', 60_000).then(
        () => {
          const body = JSON.stringify({ success: true, signalId, correlationId: `req_${signalId.slice(4, 28)}`, accountsResolved: 1 });
          res.writeHead(202, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
        },
        () => res.writeHead(503).end(),
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    fs.writeFileSync(`${readyFile}.tmp`, JSON.stringify({ port, writeBytes: Buffer.byteLength(command(`sig_${'0'.repeat(32)}`)) }));
    fs.renameSync(`${readyFile}.tmp`, readyFile);
  });
}

/** Starts the floor server in a process group of its own; stopped by `stop()` (and by the bench's cleanup). */
export async function startHttpFloor(runDir: string, spec: HttpFloorSpec): Promise<HttpFloor> {
  const specFile = path.join(runDir, 'http-floor.spec.json');
  const readyFile = path.join(runDir, 'http-floor.ready.json');
  const logFile = path.join(runDir, 'http-floor.log');
  fs.writeFileSync(specFile, JSON.stringify(spec));
  fs.rmSync(readyFile, { force: true });
  const fd = fs.openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [path.join(__dirname, 'http-floor.js'), specFile, readyFile], {
      cwd: REPO_ROOT,
      env: baseEnv(),
      stdio: ['pipe', fd, fd],
      detached: true,
    });
  } finally {
    fs.closeSync(fd);
  }
  liveChildren.add(child);
  child.stdin?.on('error', () => undefined);
  const stop = async () => {
    await stopChild(child);
    liveChildren.delete(child);
  };
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(readyFile)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new StageError(`the floor server did not start; last lines of ${logFile}:\n${tailFile(logFile)}`);
    }
    await sleep(50);
  }
  const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as { port: number; writeBytes: number };
  return { url: `http://127.0.0.1:${ready.port}`, pgid: child.pid!, writeBytes: ready.writeBytes, stop };
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`http-floor: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  });
}
