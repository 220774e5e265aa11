import type { Registry } from '../registry/registry';
import { BRIDGE_FEATURES, type Account } from '../domain/account';
import { Refusal } from '../refusal';
import type { ReportDelivery, SignalExecutions } from '../signals/executions';
import type { ReportCourier } from './report-courier';
import { isTemporalBackpressure } from '../temporal/failures';
import { accountOfCommand } from '../domain/ids';
import {
  accountFiguresSchema,
  BRIDGE_PROTOCOL_VERSION,
  helloSchema,
  reportsBodySchema,
  type AccountFigures,
  type BridgeCommand,
  type StopOutDirective,
} from '../domain/bridge-protocol';
import type { FiguresStore } from './figures';
import type { CommandQueue, RecordedReport } from './queue';
import type { BridgePresence } from './presence';
import type { BridgeCallLog, BridgeRefusalReason } from './bridge-state';
import { credentialId, hashCredential } from '../registry/credentials';
import type { ReportedOutcomes } from '../signals/reported-outcomes';
import { outcomeOfReport } from '../domain/outcome';
import { isOpening } from '../domain/actions';
import type { BridgeReport } from '../domain/bridge-protocol';
import type { Logger } from 'pino';
import { recordStopOutEvents, stopOutDirectiveOf, type StopOutDeps } from './stop-out-events';
import { tradesBodySchema, type TradesAnswer } from '../domain/trade-events';
import { openTradesCall, recordTrades, type TradesDeps } from '../trades/record';

/** The bridge API's use cases (docs/bridge-protocol.md): what an EA or cBot can do, authenticated by its bridge token. */

export interface GatewayDeps {
  registry: Registry;
  queue: CommandQueue;
  executions: SignalExecutions;
  maxWaitMs: number;
  presence?: BridgePresence;
  /** Where the account figures bridges send are kept (src/bridge/figures.ts). */
  figures?: FiguresStore;
  /** Where a delivered report's outcome is kept for the poll (src/signals/reported-outcomes.ts). */
  reported?: ReportedOutcomes;
  logger?: Logger;
  /** The bound on quote ages the stop-out's watch runs with (FIGURES_MAX_AGE_MS, src/risk/figures-age.ts). */
  figuresMaxAgeMs: number;
  /** Where the stop-outs bridges report go (protocol 1.4); without it an event is refused. */
  stopOuts?: StopOutDeps;
  /** Hands reports to their workflows, a bounded number at once (src/bridge/report-courier.ts). */
  courier: ReportCourier;
  /** The token each account's bridge calls with, and its calls' refusals, for the owner's page (src/bridge/bridge-state.ts). */
  calls?: BridgeCallLog;
  /** The trade journal (protocol 1.5, src/trades); without it `POST /bridge/v1/trades` answers 503. */
  trades?: TradesDeps;
}

export const MAX_COMMANDS_PER_POLL = 100;

export async function bridgeAccount(deps: GatewayDeps, token: string | undefined): Promise<Account> {
  const account = token ? await deps.registry.authenticateBridge(token) : null;
  if (!account) {
    // A token the account had before its newest: the bridge left behind by a rotation, named on that account's page.
    const left = token && deps.calls ? await deps.registry.retiredBridgeAccount(token) : null;
    if (left)
      await deps.calls?.refused(left, { status: 401, reason: 'old_token', message: 'a bridge called with the token this account had before its newest' });
    throw new Refusal('unauthorized', 'Missing or invalid bridge token');
  }
  if (deps.calls) await deps.calls.tokenUsed(account.id, credentialId(hashCredential(token!)));
  return account;
}

/** A refusal of a known account's call, kept for its page, then thrown. */
async function refuse(deps: GatewayDeps, accountId: string, reason: BridgeRefusalReason, refusal: Refusal): Promise<never> {
  await deps.calls?.refused(accountId, { status: 400, reason, message: refusal.message });
  throw refusal;
}

/** The hello of an authenticated bridge (the route authenticates it first, as every bridge call: once). */
export async function bridgeHello(deps: GatewayDeps, account: Account, body: unknown) {
  deps.presence?.seen(account);
  const parsed = helloSchema.safeParse(body);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    return refuse(deps, account.id, 'invalid_call', new Refusal('invalid', 'Invalid hello', { details }));
  }
  if (parsed.data.platform !== account.platform) {
    return refuse(
      deps,
      account.id,
      'wrong_platform',
      new Refusal('invalid', `This token belongs to a ${account.platform} account, not ${parsed.data.platform}`),
    );
  }
  const features = BRIDGE_FEATURES.filter((f) => parsed.data.capabilities.includes(f));
  await deps.registry.recordBridgeVersion(account.id, parsed.data.bridgeVersion, features);
  // An account added by its owner trades only once a bridge with its token has said hello (docs/owners.md).
  if (account.unlockOnHello) await deps.registry.unlockAfterHello(account.id);
  if (parsed.data.symbols) await deps.registry.recordInstruments(account.id, parsed.data.symbols);
  const a = parsed.data.account;
  // The hello's account is loose (older bridges send what they have): kept only when it holds the figures.
  const figures = accountFiguresSchema.safeParse(
    a && { balance: a.balance, equity: a.equity, margin: a.margin, freeMargin: a.freeMargin, currency: a.currency },
  );
  if (figures.success) await keepFigures(deps, account.id, figures.data);
  await deps.queue.startSession(account.id);
  return {
    accountId: account.id,
    protocolVersion: BRIDGE_PROTOCOL_VERSION,
    serverTime: new Date().toISOString(),
    ...stopOutDirectiveOf(account, deps.figuresMaxAgeMs),
  };
}

/**
 * The long-poll of an authenticated bridge (the route authenticates it first, to rate-limit by token). One waiting
 * poll per account: a newer one ends this one at once with no commands and `superseded: true`.
 */
export async function bridgeCommands(
  deps: GatewayDeps,
  account: Account,
  waitMs: number,
  signal: AbortSignal,
): Promise<{ commands: BridgeCommand[]; serverTime: string; superseded?: true; stopOut?: StopOutDirective }> {
  const pollEnded = deps.presence?.pollOpened(account);
  const wait = Math.max(0, Math.min(Number.isFinite(waitMs) ? waitMs : 0, deps.maxWaitMs));
  let taken;
  try {
    taken = await deps.queue.takeOrWait(account.id, MAX_COMMANDS_PER_POLL, wait, signal);
  } finally {
    pollEnded?.();
  }
  const { commands, superseded } = taken;
  // The stop-out's settings: from the record at hand (the next poll brings any change), read again only when this
  // account has a stop-out on and commands go out, which a long poll may hand out 25 s after it began: the bridge looks
  // after them with the owner's reset of now (an entry accepted after a reset must not meet the stop-out of before it).
  // An account without a stop-out costs its signals no read here.
  const armed = commands.length > 0 && account.risk.lossGuards?.stopOut === true;
  const now = armed ? ((await deps.registry.getAccount(account.id)) ?? account) : account;
  return {
    commands,
    serverTime: new Date().toISOString(),
    ...(superseded ? { superseded: true as const } : {}),
    ...stopOutDirectiveOf(now, deps.figuresMaxAgeMs),
  };
}

/** The reports of an authenticated bridge. */
export async function bridgeReports(deps: GatewayDeps, account: Account, body: unknown) {
  deps.presence?.seen(account);
  const parsed = reportsBodySchema.safeParse(body);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    return refuse(deps, account.id, 'invalid_call', new Refusal('invalid', 'Invalid reports', { details }));
  }
  if (parsed.data.account) await keepFigures(deps, account.id, parsed.data.account);
  const events = parsed.data.events ?? [];
  let eventResults: Awaited<ReturnType<typeof recordStopOutEvents>> | undefined;
  if (events.length > 0) {
    if (!deps.stopOuts) throw new Refusal('invalid', 'This service does not take events');
    eventResults = await recordStopOutEvents(deps.stopOuts, account, events, Date.now());
  }
  const reports = parsed.data.reports;
  // Only this account's commands; the commandId is the account workflow id, so Temporal, not Redis, knows it.
  const recorded = await Promise.all(
    reports.map((r) => (accountOfCommand(r.commandId) === account.id ? deps.queue.recordReport(account.id, r) : Promise.resolve(undefined))),
  );
  if (recorded.some((r) => r?.kind === 'full')) {
    // The account's bound of brief records is full: this call's own go again, and nothing of it reaches Temporal.
    await Promise.all(recorded.map((r, i) => (r?.kind === 'orphan' ? deps.queue.dropOrphanReport(account.id, reports[i]!.commandId) : Promise.resolve())));
    throw new Refusal('backpressure', 'Too many reports for commands the service does not hold, retry later');
  }
  const results = await Promise.all(reports.map((report, i) => answerReport(deps, account, report, recorded[i])));
  // Answered once the replicas hold the reports too (REDIS_MIN_REPLICAS_ACK): a bridge forgets a report it saw answered.
  if (results.some((r) => r.result !== 'unknown')) await deps.queue.awaitReplicas();
  return { results, ...(eventResults ? { events: eventResults } : {}) };
}

/** Lets one trades call of the account in before its body is read (docs/trades.md, "Bounds"); what ends it. */
export async function bridgeTradesCall(deps: GatewayDeps, account: Account): Promise<() => Promise<void>> {
  if (!deps.trades) throw new Refusal('not_available', 'This service keeps no trade journal');
  return openTradesCall(deps.trades, account);
}

/** Trade events and the book of an authenticated bridge (protocol 1.5; docs/trades.md). */
export async function bridgeTrades(deps: GatewayDeps, account: Account, body: unknown): Promise<TradesAnswer> {
  deps.presence?.seen(account);
  const parsed = tradesBodySchema.safeParse(body);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    return refuse(deps, account.id, 'invalid_call', new Refusal('invalid', 'Invalid trades', { details }));
  }
  if (!deps.trades) throw new Refusal('not_available', 'This service keeps no trade journal');
  if (parsed.data.account) await keepFigures(deps, account.id, parsed.data.account);
  return recordTrades(deps.trades, account, parsed.data, Date.now());
}

type ReportResult = { commandId: string; result: 'recorded' | 'duplicate' | 'unknown' };

/**
 * One recorded report (undefined: not a command of this account): answered once Redis holds it, and handed to its
 * workflow in the background (a bridge never waits on Temporal for a command the service holds). A report for a command
 * Redis does not hold is the exception: only Temporal knows whether that command exists (Redis may have lost it), so it
 * is delivered before it is answered, and its brief record goes again when Temporal knows no such command.
 */
async function answerReport(deps: GatewayDeps, account: Account, report: BridgeReport, recorded: RecordedReport | undefined): Promise<ReportResult> {
  const answer = (result: ReportResult['result']): ReportResult => ({ commandId: report.commandId, result });
  if (recorded === undefined) return answer('unknown');
  switch (recorded.kind) {
    case 'full': // refused for the whole call before this
    case 'closed':
      // Withdrawn or overtaken: no bridge was handed it, and its workflow has ended with its outcome.
      return answer('duplicate');
    case 'first':
    case 'repeat':
      await keepForPoll(deps, recorded.command, recorded.report);
      // Repeats are handed over again too: the first hand-over may have been lost with its ingress.
      deps.courier.post(account.region, recorded.report);
      return answer(recorded.kind === 'first' ? 'recorded' : 'duplicate');
    case 'orphan':
    case 'orphan-repeat': {
      let delivery: ReportDelivery;
      try {
        delivery = await deps.courier.deliver(account.region, recorded.report);
      } catch (err) {
        if (isTemporalBackpressure(err)) throw new Refusal('backpressure', 'System under high load, retry later');
        throw err;
      }
      if (delivery === 'unknown') {
        await deps.queue.dropOrphanReport(account.id, report.commandId);
        return answer('unknown');
      }
      // A closed execution already has its outcome: this report came after the first one.
      return answer(delivery === 'delivered' && recorded.kind === 'orphan' ? 'recorded' : 'duplicate');
    }
  }
}

/**
 * The bridge's word, recorded as its command's first report: the poll may show it at once, before Temporal has it.
 * It is the report every delivery sends, so the one the workflow takes and derives the same outcome from; a bridge
 * reports only a command it took, which the workflow then waits for (it never ends such an account another way on
 * its own). A failure here loses nothing (the memo will have the outcome), so it is logged, never answered to the
 * bridge as an error.
 */
async function keepForPoll(deps: GatewayDeps, command: BridgeCommand, report: BridgeReport): Promise<void> {
  // The poll reports opening signals only (spec §4.3), as the signal workflow's memo does.
  if (!deps.reported || !isOpening(command.action)) return;
  const outcome = {
    accountId: command.accountId,
    ...outcomeOfReport(report, command.action),
    occurredAt: report.executedAt ?? new Date().toISOString(),
  };
  await deps.reported.record(command.signalId, outcome).catch((err: unknown) => {
    deps.logger?.warn({ signalId: command.signalId, accountId: command.accountId, err: String(err) }, 'reported outcome not kept for the poll');
  });
}

/** The account's figures, as the bridge sent them now. Only for reading: a failure to keep them is logged, never answered. */
async function keepFigures(deps: GatewayDeps, accountId: string, figures: AccountFigures): Promise<void> {
  await deps.figures?.record(accountId, figures, Date.now()).catch((err: unknown) => {
    deps.logger?.warn({ accountId, err: String(err) }, 'account figures not kept');
  });
}
