#!/usr/bin/env node
import type { Redis } from 'ioredis';
import { openRedis } from '../redis';
import { ZodError } from 'zod';
import { loadConfig } from '../config';
import { RedisRegistry, RegistryRefusal } from '../registry/registry';
import { CliError, oneLine, parseVerbArgs, summariseZod } from './args';
import { VERBS, type Verb, type VerbContext } from './verbs';
import { RedisFigures } from '../bridge/figures';
import { ownerCallbacksOf } from '../callbacks/wiring';
import { RedisCommandQueue } from '../bridge/queue';
import { withdrawForOwnerChange } from '../bridge/owner-change';
import { Regions } from '../temporal/regions';
import { tellWithdrawn } from '../temporal/withdrawals';
import { linkBaseUrl } from '../owners/public-url';

/**
 * The admin CLI, the stand-in for the dashboard: `npm run admin -- <verb> ... [--json]` (docs/registry.md).
 * Exit 0 on success; 1 on a usage or validation error; 2 when Redis cannot be reached or something unexpected failed.
 * Every failure is one line on stderr. Secrets and tokens are printed once, on stdout, and never logged.
 */

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  stdin(): Promise<string>;
  env: NodeJS.ProcessEnv;
}

const GROUPS = ['secret', 'token', 'account', 'owner', 'callback', 'trades'];

export function usage(): string {
  const lines = ['usage: npm run admin -- <verb> [arguments] [--json]', ''];
  for (const v of VERBS) lines.push(`  ${v.usage}`, `      ${v.summary}`);
  lines.push('', 'Every verb takes --json for machine output. REDIS_URL selects the registry (default redis://127.0.0.1:6379).');
  return lines.join('\n');
}

function findVerb(words: string[]): { verb: Verb; rest: string[] } {
  const [group, sub] = words;
  if (group === undefined) throw new CliError('no verb given; try: npm run admin -- help');
  if (GROUPS.includes(group)) {
    const subs = VERBS.filter((v) => v.words[0] === group).map((v) => v.words[1]);
    if (sub === undefined || sub.startsWith('-')) throw new CliError(`${group} needs one of: ${subs.join(', ')}`);
    const verb = VERBS.find((v) => v.words[0] === group && v.words[1] === sub);
    if (!verb) throw new CliError(`unknown verb "${group} ${sub}"; ${group} takes one of: ${subs.join(', ')}`);
    return { verb, rest: words.slice(2) };
  }
  const verb = VERBS.find((v) => v.words.length === 1 && v.words[0] === group);
  if (!verb) throw new CliError(`unknown verb "${group}"; try: npm run admin -- help`);
  return { verb, rest: words.slice(1) };
}

/** Runs one command line and returns its exit code. */
export async function runAdmin(argv: string[], io: Io): Promise<number> {
  // Global flags may come before the verb words: `admin --json account list`.
  const leading: string[] = [];
  let i = 0;
  while (i < argv.length && ['--json', '--help', '-h'].includes(argv[i]!)) leading.push(argv[i++]!);
  const words = argv.slice(i);
  if (words[0] === 'help' || (words.length === 0 && leading.some((a) => a !== '--json'))) {
    io.stdout(`${usage()}\n`);
    return 0;
  }

  let redis: Redis | undefined;
  let regions: Regions | undefined;
  let redisUrl = '';
  try {
    const { verb, rest } = findVerb(words);
    const args = parseVerbArgs([...leading, ...rest], verb.options);
    const json = args.values.json === true;
    if (args.values.help === true) {
      io.stdout(`usage: npm run admin -- ${verb.usage}\n  ${verb.summary}\n`);
      return 0;
    }
    let config: ReturnType<typeof loadConfig>;
    try {
      config = loadConfig(io.env);
    } catch (err) {
      throw new CliError(oneLine((err as Error).message));
    }
    redisUrl = config.redis.url;
    let registry: RedisRegistry | undefined;
    const ctx: VerbContext = {
      async registry() {
        if (!registry) {
          redis = openRedis(config.redis, {
            lazyConnect: true,
            connectionName: 'admin-cli',
            enableOfflineQueue: false,
            maxRetriesPerRequest: 1,
            retryStrategy: () => null,
            connectTimeout: 5000,
            commandTimeout: 10_000,
          });
          let lastError: Error | undefined;
          redis.on('error', (err: Error) => (lastError = err)); // reported through the failing command instead
          await redis.connect().catch((err: unknown) => {
            const failure = err instanceof Error ? err : new Error(String(err));
            throw lastError && lastError !== failure ? new Error(`${lastError.message} (${failure.message})`, { cause: failure }) : failure;
          });
          registry = new RedisRegistry(redis);
        }
        return registry;
      },
      async figures() {
        await ctx.registry();
        return new RedisFigures(redis!);
      },
      async redis() {
        await ctx.registry();
        return redis!;
      },
      config,
      async callbacks() {
        await ctx.registry();
        return ownerCallbacksOf(config, redis!);
      },
      async withdrawForOwnerChange(accountId, region) {
        await ctx.registry();
        const temporal = () => (regions ??= new Regions(config.temporal.regions, config.temporal.startTimeoutMs, config.temporal.connectTimeoutMs));
        return withdrawForOwnerChange(
          new RedisCommandQueue(redis!, { redeliverAfterMs: config.redis.redeliverAfterMs, replicaAck: config.redis.replicaAck }),
          (commandId) => tellWithdrawn(temporal(), region, 'account_owner_changed')(commandId),
          accountId,
        );
      },
      async publicUrl() {
        return linkBaseUrl(await ctx.redis(), io.env, config.publicUrl);
      },
      readStdin: () => io.stdin(),
      now: () => Date.now(),
    };
    const result = await verb.run(args, ctx);
    io.stdout(json ? `${JSON.stringify(result.json, null, 2)}\n` : `${result.human}\n`);
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      io.stderr(`error: ${err.message}\n`);
      return err.exitCode;
    }
    if (err instanceof RegistryRefusal) {
      // A write the registry refused in the same step as the check (a race with another edit): a validation error.
      io.stderr(`error: ${oneLine(err.message)}\n`);
      return 1;
    }
    if (err instanceof ZodError) {
      io.stderr(`error: ${summariseZod(err)}\n`);
      return 1;
    }
    const message = oneLine(err instanceof Error ? err.message : String(err));
    if (redisUrl && isConnectionError(err)) io.stderr(`error: cannot reach Redis at ${redact(redisUrl)}: ${message}\n`);
    else io.stderr(`error: ${message}\n`);
    return 2;
  } finally {
    redis?.disconnect();
    await regions?.close();
  }
}

function isConnectionError(err: unknown): boolean {
  return (
    err instanceof Error &&
    /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|Connection is closed|enableOfflineQueue|timed out|NOAUTH|WRONGPASS/i.test(err.message)
  );
}

/** The Redis URL without its password, fit for an error message. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(REDIS_URL)';
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

if (require.main === module) {
  runAdmin(process.argv.slice(2), {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    stdin: readStdin,
    env: process.env,
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`error: ${oneLine(String(err))}\n`);
      process.exitCode = 2;
    },
  );
}
