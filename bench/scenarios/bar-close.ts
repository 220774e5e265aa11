/**
 * Bar closes (scenarios 10, 12, 13; scenario 14 after a busy phase): when every strategy on a timeframe fires together,
 * the alerts arrive at the same instant, each on its account's URL, each on a connection of its own. The same bar
 * close again 5 s later (the next bar of a 5 s timeframe, the first one's work possibly still going on). Beside it, in
 * the same run with the same client (bench/burst.ts), the floor: a bare server that answers 202 after one Redis write
 * of the same size (bench/http-floor.ts). Each accepted alert's fill is the paper bridge's ledger line.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { accountWorkflowId, signalWorkflowId } from '../../src/domain/ids';
import { burstFigures, postBurst, type BurstFigures, type BurstPost } from '../burst';
import { log, StageError, httpJson } from '../common';
import { cpuSnapshot, cpuUsage } from '../cpu';
import type { HttpFloor } from '../http-floor';
import { tallyOutcomes, type OutcomeTally } from '../outcomes';
import { round, summarize, type Summary } from '../stats';
import { redisCommandStats, signalPathCommands, type SignalPathCommands } from '../work-counters';
import type { Context } from './context';

/** The next bar close of the same alerts: 5 s after the first one's instant. */
const AGAIN_AFTER_MS = 5_000;
/** The quiet window before a bar close in which the idle rates (Redis per command, ingress CPU) are measured. */
const IDLE_SEC = 3;

export interface BarCloseRound extends BurstFigures {
  filled: number;
  /** The alert (its post sent) → its fill in the paper bridge's ledger, per accepted alert. */
  fillMs: Summary;
  /** Its 202 → its fill (the bridge may fill before the 202 reaches the sender: then negative). */
  answerToFillMs: Summary;
}

export interface FloorFigures {
  rounds: BurstFigures[];
  /** The floor server's CPU per request over its rounds. */
  cpuMsPerRequest: number | null;
  /** Bytes of its one Redis write per request. */
  writeBytes: number;
}

export interface BarCloseRun {
  label: string;
  accounts: number;
  alertsPerAccount: number;
  rounds: BarCloseRound[];
  /** Signals accepted in the measured stage: the rounds' and any other load's beside them (scenario 14's busy phase). */
  signals: number;
  floor?: FloorFigures;
  /** The ingress's CPU over the rounds until the last fill, less its idle rate, per accepted alert. */
  ingressCpuMsPerAccepted: number | null;
  /** Over the rounds and their drain (Temporal idle again). */
  redis?: SignalPathCommands;
  /** One accepted alert's workflows once closed: the signal workflow's and its account workflow's events. */
  historyEvents?: { signal: number; account: number };
  outcomes?: OutcomeTally;
}

/** `perAccount` alerts for each account, strategy by strategy: the paths of one bar close. */
export function barClosePaths(accounts: readonly string[], perAccount: number): string[] {
  return Array.from({ length: perAccount }, () => accounts.map((a) => `/webhook/custom/${a}`)).flat();
}

export function barCloseBody(secret: string): string {
  return JSON.stringify({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
}

/** The same bursts against the floor server, `rounds` of them AGAIN_AFTER_MS apart, and its CPU per request. */
export async function floorRounds(floor: HttpFloor, paths: readonly string[], body: string, rounds: number): Promise<FloorFigures> {
  const before = cpuSnapshot({ floor: floor.pgid });
  const t0 = Date.now();
  const out: BurstFigures[] = [];
  for (let i = 0; i < rounds; i++) {
    await sleep(Math.max(0, t0 + i * AGAIN_AFTER_MS - Date.now()));
    out.push(burstFigures(await postBurst(floor.url, paths, body)));
  }
  const u = cpuUsage(before, cpuSnapshot({ floor: floor.pgid }));
  const requests = out.reduce((s, r) => s + r.posts, 0);
  const cpuMsPerRequest = requests > 0 ? round(((u.byProgram['floor'] ?? 0) * u.seconds * 1000) / requests, 3) : null;
  return { rounds: out, cpuMsPerRequest, writeBytes: floor.writeBytes };
}

/** One bar close against the service at `at` (ms since the epoch), then its fills from the ledger. */
async function ourRound(ctx: Context, paths: readonly string[], body: string, at: number): Promise<{ round: BarCloseRound; posts: BurstPost[] }> {
  const { stack, helpers } = ctx;
  await sleep(Math.max(0, at - Date.now()));
  const posts = await postBurst(stack.ingress.url, paths, body);
  const accepted = posts.filter((p) => p.signalId !== undefined);
  let counted = 0;
  await helpers.infra
    .waitFor(
      `the ${accepted.length} accepted bar-close alerts to be filled`,
      async () => {
        stack.ledger.update();
        if (accepted.every((p) => stack.ledger.bySignal.has(p.signalId!))) return true;
        // Temporal's visibility at most twice a second (it is a query on the server measured).
        if (Date.now() - counted < 500) return false;
        counted = Date.now();
        return (await stack.client.workflow.count('ExecutionStatus="Running"')).count === 0;
      },
      120_000,
      25,
    )
    .catch((err: Error) => log(`bar close: ${err.message}; the figures cover the fills seen by then`));
  stack.ledger.update();
  const fills = accepted.flatMap((p) => {
    const fill = stack.ledger.bySignal.get(p.signalId!)?.[0];
    return fill ? [{ fromAlert: fill.t - p.sentAt, fromAnswer: fill.t - p.answeredAt }] : [];
  });
  return {
    round: {
      ...burstFigures(posts),
      filled: fills.length,
      fillMs: summarize(fills.map((f) => f.fromAlert)),
      answerToFillMs: summarize(fills.map((f) => f.fromAnswer)),
    },
    posts,
  };
}

export function describeRound(what: string, r: BurstFigures & Partial<BarCloseRound>): string {
  const fill = r.fillMs ? `; ${r.filled} of ${r.accepted} filled, alert → fill p50 ${r.fillMs.p50} p99 ${r.fillMs.p99} max ${r.fillMs.max} ms` : '';
  return `${what}: ${r.posts} posts, answers ${JSON.stringify(r.answered)}, alert → answer p50 ${r.answerMs.p50} p99 ${r.answerMs.p99} max ${r.answerMs.max} ms, last answer ${r.lastAnswerMs} ms after the instant, ${r.answeredAfter3s} after 3 s${fill}`;
}

/**
 * The bar closes of one scenario against the service (`rounds` of them, AGAIN_AFTER_MS apart, the first once `after` has settled), with
 * the work they cost: the ingress's CPU and Redis's commands, each less its idle rate measured just before; then the
 * drain, the history of one alert's workflows and every accepted alert's outcome through the poll. `idle`: rates the
 * caller measured before its own load; `more`: the caller's other signals accepted meanwhile (the work is theirs too).
 */
export async function ourRounds(
  ctx: Context,
  label: string,
  what: string,
  paths: readonly string[],
  body: string,
  rounds: number,
  opts: { after?: Promise<unknown>; idle?: IdleRates; more?: Promise<number> } = {},
): Promise<Omit<BarCloseRun, 'label' | 'accounts' | 'alertsPerAccount' | 'floor'>> {
  const { stack, results, measure, drainMeasured } = ctx;
  const redis = ctx.redisCounter;
  const idle = opts.idle ?? (await idleRates(ctx));
  const commandsBefore = await redisCommandStats(redis);
  const windowStart = Date.now();
  const posts: BurstPost[] = [];
  const measured = await measure(
    label,
    async () => {
      const cpuBefore = cpuSnapshot({ ingress: stack.ingress.pid });
      if (opts.after) await opts.after;
      const t0 = Date.now();
      const done = await Promise.all(Array.from({ length: rounds }, (_, i) => ourRound(ctx, paths, body, t0 + i * AGAIN_AFTER_MS)));
      const u = cpuUsage(cpuBefore, cpuSnapshot({ ingress: stack.ingress.pid }));
      for (const d of done) posts.push(...d.posts);
      const accepted = done.reduce((s, d) => s + d.round.accepted, 0) + (await (opts.more ?? Promise.resolve(0)));
      const ingressMs = ((u.byProgram['ingress'] ?? 0) - idle.ingressCores) * u.seconds * 1000;
      return { rounds: done.map((d) => d.round), accepted, ingressCpuMsPerAccepted: accepted > 0 ? round(ingressMs / accepted, 3) : null };
    },
    (r) => r.accepted,
  );
  measured.rounds.forEach((r, i) => log(describeRound(`${what}${i > 0 ? `, again ${(i * AGAIN_AFTER_MS) / 1000} s later` : ''}`, r)));
  results.drains[label] = await drainMeasured(label, what, measured.accepted);
  const commandsAfter = await redisCommandStats(redis);
  const redisFigures = signalPathCommands(
    idle.redis,
    { before: commandsBefore, after: commandsAfter, seconds: (Date.now() - windowStart) / 1000 },
    measured.accepted,
  );
  log(
    `${what}: Redis ${redisFigures.total} commands, ${redisFigures.signalPath} on the signal path (${redisFigures.perAccepted} per accepted signal; ${redisFigures.byCommand
      .slice(0, 6)
      .map((c) => `${c.command} ${c.calls}`)
      .join(', ')}); ingress CPU ${measured.ingressCpuMsPerAccepted} ms per accepted alert`,
  );
  const ids = posts.flatMap((p) => (p.signalId ? [p.signalId] : []));
  const sample = posts.find((p) => p.signalId !== undefined);
  const historyEvents = sample ? await historyOf(ctx, sample.signalId!, sample.path.split('/').pop()!).catch(() => undefined) : undefined;
  // An ingress still swamped may not answer the poll in time: the figures measured are kept, the outcomes left out.
  const outcomes = await tallyOutcomes(httpJson, stack.ingress.url, stack.token, ids).catch((err: Error) => {
    log(`${what}: the outcomes could not be read through the poll: ${err.message}`);
    return undefined;
  });
  log(`${what} outcomes through the poll: ${JSON.stringify(outcomes)}; history of one alert ${JSON.stringify(historyEvents ?? null)}`);
  if (ids.length === 0) throw new StageError(`${what}: no 202 at all: ${JSON.stringify(measured.rounds[0]?.answered)}`);
  return {
    rounds: measured.rounds,
    signals: measured.accepted,
    ingressCpuMsPerAccepted: measured.ingressCpuMsPerAccepted,
    redis: redisFigures,
    ...(historyEvents ? { historyEvents } : {}),
    ...(outcomes ? { outcomes } : {}),
  };
}

export interface IdleRates {
  redis: { before: Record<string, number>; after: Record<string, number>; seconds: number };
  ingressCores: number;
}

/** Redis's commands by name and the ingress's CPU over IDLE_SEC with nothing going on but the bridges' long-polls. */
export async function idleRates(ctx: Context): Promise<IdleRates> {
  const { stack } = ctx;
  const before = await redisCommandStats(ctx.redisCounter);
  const cpu = cpuSnapshot({ ingress: stack.ingress.pid });
  const t0 = Date.now();
  await sleep(IDLE_SEC * 1000);
  const after = await redisCommandStats(ctx.redisCounter);
  const u = cpuUsage(cpu, cpuSnapshot({ ingress: stack.ingress.pid }));
  return { redis: { before, after, seconds: (Date.now() - t0) / 1000 }, ingressCores: u.byProgram['ingress'] ?? 0 };
}

async function historyOf(ctx: Context, signalId: string, accountId: string): Promise<{ signal: number; account: number }> {
  const events = async (id: string) => (await ctx.stack.client.workflow.getHandle(id).fetchHistory()).events?.length ?? 0;
  return { signal: await events(signalWorkflowId(signalId)), account: await events(accountWorkflowId(signalId, accountId)) };
}

/** Scenarios 10, 12 and 13: the floor's bar closes, then ours, each twice (AGAIN_AFTER_MS apart). */
export async function runBarCloseScenario(
  ctx: Context,
  spec: { scenario: string; label: string; accounts: readonly string[]; perAccount: number; secret: string },
): Promise<BarCloseRun> {
  ctx.mark(spec.label);
  const paths = barClosePaths(spec.accounts, spec.perAccount);
  const body = barCloseBody(spec.secret);
  const what = `scenario ${spec.scenario} (bar close of ${paths.length} alerts over ${spec.accounts.length} accounts)`;
  log(`${what}: the floor server first, then ours; each posted at one instant, and again ${AGAIN_AFTER_MS / 1000} s later`);
  const floor = await floorRounds(await ctx.httpFloor(), paths, body, 2);
  floor.rounds.forEach((r, i) => log(describeRound(`${what}, floor${i > 0 ? ', again' : ''}`, r)));
  log(`${what}, floor: ${floor.cpuMsPerRequest} ms CPU per request, ${floor.writeBytes} bytes written per request`);
  const ours = await ourRounds(ctx, spec.label, what, paths, body, 2);
  return { label: spec.label, accounts: spec.accounts.length, alertsPerAccount: spec.perAccount, floor, ...ours };
}
