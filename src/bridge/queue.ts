import type { Cluster, Redis } from 'ioredis';
import type { BridgeCommand, BridgeReport } from '../domain/bridge-protocol';
import { awaitReplicas, type ReplicaAck } from '../redis';
import { ADOPT, DROP_ORPHAN, ENQUEUE, NEW_POLL, REPORT, SUPERSEDED, TAKE, WITHDRAW, WITHDRAW_UNTAKEN } from './queue-scripts';
import { accountOfWakeChannel, bridgeKeys } from '../redis-keys';

/**
 * A command a bridge took and has not reported on for this long is handed out again (the bridge runs a commandId at
 * most once). A report follows a take within a second or two; 15 s is a bridge that died with the command, yet shorter
 * than a market entry's 30 s age, so another poll of that account can still place it.
 */
export const REDELIVER_AFTER_MS = 15_000;

/**
 * The per-account command queue in Redis. A command stays queued until the bridge reports it, so delivery is
 * at-least-once: a command handed out is handed out again when the bridge starts a new session (hello) or when it
 * has gone unreported for `redeliverAfterMs`. The bridge dedups by commandId.
 * Keys carry the account in a hash tag so that one account's keys live on one Redis Cluster slot.
 */
export interface CommandQueue {
  /**
   * Idempotent by commandId: an activity retry never queues a second copy. `overtaken`: not queued, because a later
   * command of the account was already handed out while this one's number was no longer held (src/bridge/ordering.ts).
   * `resend` queues it whatever the order and whatever Redis says of it (Redis forgot a command that a bridge may hold).
   * `generation`, the account's data generation when the command was numbered: a command numbered before Redis lost
   * the account's data goes in whatever the order, and one Redis now holds as withdrawn or overtaken is `forgotten`
   * (a bridge may have taken it before the loss).
   */
  enqueue(command: BridgeCommand, options?: { resend?: boolean; generation?: string }): Promise<EnqueueResult>;
  /**
   * The account workflow's enqueue when the ingress may have queued the command already (dispatch at acceptance):
   * queues it like `enqueue` if it is not there, and otherwise says what became of it meanwhile: still queued or
   * taken (`queued`), reported (with the report, which may have come before the workflow existed), withdrawn by an
   * owner change, or overtaken; `forgotten` as enqueue's.
   */
  adopt(command: BridgeCommand, generation?: string): Promise<AdoptResult>;
  /** Commands the bridge should (re)execute now, in acceptance order; marks them delivered. */
  take(accountId: string, limit: number): Promise<BridgeCommand[]>;
  /**
   * Pulls a command back if no bridge has taken it yet. `queued` says whether this command was queued: then a missing
   * record means Redis lost it (a bridge may have taken it: `forgotten`, never `withdrawn`); otherwise a missing record
   * means it never got in, and a tombstone keeps a late retry of the enqueue out. With the command's `generation`, a
   * command numbered before Redis lost the account's data is never withdrawn: `forgotten` (a bridge may hold it).
   */
  withdraw(accountId: string, commandId: string, queued: boolean, generation?: string): Promise<WithdrawResult>;
  /**
   * Withdraws, in one step, every queued command of the account no bridge has taken yet (the account changed owner):
   * `withdrawn` lists them, `handedOut` the ones a bridge already holds (they cannot be pulled back).
   */
  withdrawUntaken(accountId: string): Promise<{ withdrawn: string[]; handedOut: string[] }>;
  /**
   * The first report of a command wins; repeats get the recorded one back. A report for a command Redis does not hold
   * is kept only briefly and only up to a bound per account (`orphan`; `full` past the bound): no bridge token can
   * fill Redis with reports of commands that never existed.
   */
  recordReport(accountId: string, report: BridgeReport): Promise<RecordedReport>;
  /** Forgets a brief record of a report whose command Temporal does not know either (it never existed). */
  dropOrphanReport(accountId: string, commandId: string): Promise<void>;
  /** The report recorded for a command, if any: how a workflow learns a report whose delivery to it was lost. */
  recordedReport(accountId: string, commandId: string): Promise<BridgeReport | undefined>;
  /** Resolves once the replicas hold what this connection wrote (REDIS_MIN_REPLICAS_ACK); at once without replicas. */
  awaitReplicas(): Promise<void>;
  /** A bridge said hello: everything it was handed before and has not reported is handed out again. */
  startSession(accountId: string): Promise<void>;
  /**
   * Like take, but when nothing is due, waits up to waitMs for a command to be queued. One waiting long-poll per
   * account (across every ingress): a newer one ends an older one at once, which answers `superseded`.
   */
  takeOrWait(accountId: string, limit: number, waitMs: number, signal: AbortSignal): Promise<LongPoll>;
}

export interface LongPoll {
  commands: BridgeCommand[];
  /** A newer long-poll of the same account took over; this one ended with no commands. */
  superseded: boolean;
}

export type WithdrawResult = 'withdrawn' | 'delivered' | 'reported' | 'forgotten';
export type EnqueueResult = 'queued' | 'overtaken' | 'forgotten';
export type AdoptResult = { state: 'queued' | 'overtaken' | 'withdrawn' | 'forgotten' } | { state: 'reported'; report: BridgeReport };

/**
 * `first` / `repeat`: the report of a command Redis holds (`command`), kept for REPORT_RETENTION_SECONDS.
 * `orphan` / `orphan-repeat`: Redis does not hold the command (it lost its data, or the command never existed): a brief
 * record only, and only Temporal can say whether the command exists. `closed`: the command was withdrawn or overtaken,
 * never handed to a bridge; nothing recorded. `full`: too many orphan records of the account at once; nothing recorded.
 */
export type RecordedReport =
  | { kind: 'first' | 'repeat'; report: BridgeReport; command: BridgeCommand }
  | { kind: 'orphan' | 'orphan-repeat'; report: BridgeReport }
  | { kind: 'closed' | 'full' };

const k = {
  queue: bridgeKeys.commandQueue,
  command: bridgeKeys.commandRecord,
  session: bridgeKeys.bridgeSession,
  channel: bridgeKeys.wakeChannel,
  poll: bridgeKeys.longPollGeneration,
  handedOut: bridgeKeys.handedOutSeq,
  orphans: bridgeKeys.orphanReports,
};

const REPORT_RETENTION_SECONDS = 7 * 24 * 3600;
/**
 * A report for a command Redis does not hold is delivered to Temporal before it is answered, so its record only has to
 * outlive a bridge's resend (answered `duplicate`) and a workflow's look at its expiry (COMMAND_AGES.otherMs, 5 min).
 */
const ORPHAN_REPORT_TTL_MS = 10 * 60 * 1000;
/** At most this many such records per account at once: a whole reports call of them (docs/reliability.md). */
const ORPHAN_REPORTS_MAX = 100;
/** A long-poll's generation counter outlives any poll by far (polls last at most BRIDGE_MAX_WAIT_MS). */
const POLL_GENERATION_TTL_MS = 24 * 3600 * 1000;

/** ENQUEUE's and ADOPT's keys and arguments. */
function queueArgs(command: BridgeCommand, resend: boolean, generation: string | undefined): (string | number)[] {
  const acc = command.accountId;
  return [
    k.queue(acc),
    k.command(acc, command.commandId),
    bridgeKeys.pendingMarks(acc),
    k.handedOut(acc),
    bridgeKeys.dataGeneration(acc),
    JSON.stringify(command),
    command.seq,
    command.commandId,
    k.channel(acc),
    resend ? '1' : '0',
    REPORT_RETENTION_SECONDS,
    generation ?? '',
  ];
}

interface Waiter {
  generation: number;
  superseded: boolean;
  wake(): void;
}

export class RedisCommandQueue implements CommandQueue {
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** The newest long-poll generation seen per account (a poll numbered below it has been superseded). */
  private readonly newestPoll = new Map<string, number>();
  private readonly subscribed = new Set<string>();
  private closed = false;
  private subscriber: Redis | Cluster | undefined;

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly options: { redeliverAfterMs: number; replicaAck?: ReplicaAck },
  ) {}

  async enqueue(command: BridgeCommand, options: { resend?: boolean; generation?: string } = {}): Promise<EnqueueResult> {
    const result = Number(await this.redis.eval(ENQUEUE, 5, ...queueArgs(command, options.resend === true, options.generation)));
    // Queued only once the replicas hold it: a retry of an unacknowledged enqueue finds it there, or queues it anew.
    await awaitReplicas(this.redis, this.options.replicaAck);
    return result === 2 ? 'overtaken' : result === 3 ? 'forgotten' : 'queued';
  }

  async adopt(command: BridgeCommand, generation?: string): Promise<AdoptResult> {
    const [state, report] = (await this.redis.eval(ADOPT, 5, ...queueArgs(command, false, generation))) as [AdoptResult['state'], string?];
    await awaitReplicas(this.redis, this.options.replicaAck);
    return state === 'reported' ? { state, report: JSON.parse(report!) as BridgeReport } : { state };
  }

  async take(accountId: string, limit: number): Promise<BridgeCommand[]> {
    return (await this.takeDue(accountId, limit)).commands;
  }

  private async takeDue(accountId: string, limit: number): Promise<{ commands: BridgeCommand[]; nextDueAt: number | undefined }> {
    const [next, ...raw] = (await this.redis.eval(
      TAKE,
      4,
      k.queue(accountId),
      k.session(accountId),
      bridgeKeys.pendingMarks(accountId),
      k.handedOut(accountId),
      Date.now(),
      this.options.redeliverAfterMs,
      limit,
      k.command(accountId, ''),
    )) as [number, ...string[]];
    return { commands: raw.map((r) => JSON.parse(r) as BridgeCommand), nextDueAt: next >= 0 ? next : undefined };
  }

  async withdraw(accountId: string, commandId: string, queued: boolean, generation?: string): Promise<WithdrawResult> {
    const keys = [k.queue(accountId), k.command(accountId, commandId), bridgeKeys.dataGeneration(accountId)];
    return (await this.redis.eval(WITHDRAW, 3, ...keys, commandId, queued ? '1' : '0', generation ?? '')) as WithdrawResult;
  }

  async withdrawUntaken(accountId: string): Promise<{ withdrawn: string[]; handedOut: string[] }> {
    const [withdrawn, handedOut] = (await this.redis.eval(WITHDRAW_UNTAKEN, 1, k.queue(accountId), k.command(accountId, ''))) as [string[], string[]];
    return { withdrawn, handedOut };
  }

  async recordReport(accountId: string, report: BridgeReport): Promise<RecordedReport> {
    const [kind, raw, command] = (await this.redis.eval(
      REPORT,
      3,
      k.queue(accountId),
      k.command(accountId, report.commandId),
      k.orphans(accountId),
      report.commandId,
      JSON.stringify(report),
      REPORT_RETENTION_SECONDS,
      Date.now(),
      ORPHAN_REPORT_TTL_MS,
      ORPHAN_REPORTS_MAX,
    )) as [RecordedReport['kind'], string?, string?];
    if (kind === 'closed' || kind === 'full') return { kind };
    const recorded = JSON.parse(raw!) as BridgeReport;
    if (kind === 'orphan' || kind === 'orphan-repeat') return { kind, report: recorded };
    return { kind, report: recorded, command: JSON.parse(command!) as BridgeCommand };
  }

  async dropOrphanReport(accountId: string, commandId: string): Promise<void> {
    await this.redis.eval(DROP_ORPHAN, 2, k.command(accountId, commandId), k.orphans(accountId), commandId);
  }

  async recordedReport(accountId: string, commandId: string): Promise<BridgeReport | undefined> {
    const raw = await this.redis.hget(k.command(accountId, commandId), 'report');
    return raw ? (JSON.parse(raw) as BridgeReport) : undefined;
  }

  /** Recorded reports count only once the replicas hold them (REDIS_MIN_REPLICAS_ACK), like queued commands. */
  async awaitReplicas(): Promise<void> {
    await awaitReplicas(this.redis, this.options.replicaAck);
  }

  /**
   * When each command was first handed to a bridge (epoch ms), for the owner's signal log; undefined when it never
   * was, or Redis no longer holds it (7 days after its report). A command handed out before this was recorded has
   * only its latest hand-out time, which stands in for it.
   */
  async firstDeliveries(commands: readonly { accountId: string; commandId: string }[]): Promise<(number | undefined)[]> {
    return Promise.all(
      commands.map(async ({ accountId, commandId }) => {
        const [first, latest] = await this.redis.hmget(k.command(accountId, commandId), 'firstDeliveredAt', 'deliveredAt');
        const at = Number(first ?? latest ?? NaN);
        return Number.isFinite(at) ? at : undefined;
      }),
    );
  }

  async startSession(accountId: string): Promise<void> {
    await this.redis.incr(k.session(accountId));
  }

  async takeOrWait(accountId: string, limit: number, waitMs: number, signal: AbortSignal): Promise<LongPoll> {
    if (waitMs <= 0 || this.closed) return { commands: await this.take(accountId, limit), superseded: false };
    await this.subscribe(accountId);
    const until = Date.now() + waitMs;
    const generation = Number(await this.redis.eval(NEW_POLL, 1, k.poll(accountId), k.channel(accountId), POLL_GENERATION_TTL_MS));
    const set = this.waiters.get(accountId) ?? new Set();
    this.waiters.set(accountId, set);
    let wake: () => void = () => undefined;
    const waiter: Waiter = { generation, superseded: false, wake: () => wake() };
    set.add(waiter);
    // A newer poll's announcement may have arrived before this one was registered.
    this.supersede(accountId, Math.max(generation, this.newestPoll.get(accountId) ?? 0));
    const onAbort = () => waiter.wake();
    signal.addEventListener('abort', onAbort);
    let timer: NodeJS.Timeout | undefined;
    try {
      for (;;) {
        // A fresh promise before the take, so an announcement that arrives during the take still wakes this poll.
        const woken = new Promise<void>((resolve) => (wake = resolve));
        const { commands, nextDueAt } = await this.takeDue(accountId, limit);
        if (commands.length > 0 || signal.aborted || this.closed || Date.now() >= until || waiter.superseded) {
          return { commands, superseded: commands.length === 0 && waiter.superseded };
        }
        // No timer ticks: the poll sleeps until a command is announced (enqueue, a pending mark released), until a
        // held command becomes due by itself (its mark lapses, a redelivery), or until the poll's own end.
        timer = setTimeout(() => wake(), Math.min(until, nextDueAt ?? until) - Date.now());
        await woken;
        clearTimeout(timer);
        if (signal.aborted || this.closed) return { commands: [], superseded: false };
      }
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      set.delete(waiter);
      if (set.size === 0) this.waiters.delete(accountId);
    }
  }

  /** Ends every waiting long-poll of the account numbered below `generation`. */
  private supersede(accountId: string, generation: number): void {
    if (generation > (this.newestPoll.get(accountId) ?? 0)) this.newestPoll.set(accountId, generation);
    for (const waiter of this.waiters.get(accountId) ?? []) {
      if (waiter.generation < generation && !waiter.superseded) {
        waiter.superseded = true;
        waiter.wake();
      }
    }
  }

  /** Wakes every waiting long-poll, and from now on long-polls answer at once (the process is stopping). */
  async close(): Promise<void> {
    this.closed = true;
    for (const set of this.waiters.values()) for (const waiter of [...set]) waiter.wake();
    this.subscriber?.disconnect();
  }

  /** One subscription per account for the life of the process: cheap, and no unsubscribe can race a new poll. */
  private async subscribe(accountId: string): Promise<void> {
    if (this.subscribed.has(accountId)) return;
    if (!this.subscriber) {
      // Subscribing waits for the connection (offline queue on), unlike the fail-fast guards.
      // No ready check: it sends INFO, which a connection that SUBSCRIBEd during its handshake may no longer send.
      const options = { enableOfflineQueue: true, enableReadyCheck: false, commandTimeout: 5000 };
      // On a Redis Cluster, announcements reach every node (PUBLISH is cluster-wide): one subscriber anywhere hears them.
      this.subscriber = this.redis.isCluster
        ? (this.redis as Cluster).duplicate(undefined, { redisOptions: options })
        : (this.redis as Redis).duplicate(options);
      this.subscriber.on('error', () => undefined);
      this.subscriber.on('message', (channel: string, message: string) => {
        const acc = accountOfWakeChannel(channel);
        if (acc === undefined) return;
        if (message.startsWith(SUPERSEDED)) {
          this.supersede(acc, Number(message.slice(SUPERSEDED.length)));
          return;
        }
        for (const waiter of [...(this.waiters.get(acc) ?? [])]) waiter.wake();
      });
      // Announcements sent while the subscription was down are lost: every waiting poll looks again once it is back.
      let connected = false;
      this.subscriber.on('ready', () => {
        if (connected) for (const set of this.waiters.values()) for (const waiter of [...set]) waiter.wake();
        connected = true;
      });
    }
    await this.subscriber.subscribe(k.channel(accountId));
    this.subscribed.add(accountId);
  }
}
