import { stopOutDirectiveSchema, type StopOutDirective } from '../domain/bridge-protocol';
import { CallBatcher } from './batcher';
import { commandIdOf, HttpStatusError, sleepUnlessAborted } from './client';
import { refusedHelloRetryMs, SessionMember } from './fleet-member';
import { boundedAgents, nodeHttpTransport } from './http-transport';
import { asError, handleBatch, type FleetAccount, type SessionConnection } from './session';
import { SessionClient, type SessionHelloItem, type SessionPollAnswer } from './session-client';

/**
 * How a bridge process serving many accounts speaks to the service (docs/bridge-protocol.md, "Multi-account
 * sessions"): all its accounts on multi-account sessions (each session at most the
 * service's accounts per session; one long-poll each; reports, stop-out events, trade events and books batched per
 * call, each tagged by its account), over a fixed pool of connections whatever the number of accounts. Hellos go in
 * batches of HELLO_BATCH accounts, one call at a time, so a restart of thousands of accounts is a few calls and the
 * books after them share calls too. The ingress and its bridges ship together, so there is no other form to fall
 * back to; a process of one account (the MT5 bridge) speaks the single-account form instead (src/bridge-kit/session.ts).
 */

export interface FleetOptions extends Omit<SessionConnection, 'bridgeToken' | 'fetch'> {
  /** Accounts per session, at most what the service announces; default the service's bound. */
  accountsPerSession?: number;
  diag: (line: Record<string, unknown>) => void;
}

/**
 * The most connections the fleet holds to the ingress, whatever its number of accounts: one long-poll per session (a
 * session is up to 10,000 accounts) and the batched calls beside it, one in flight per kind. Four leaves a webhook
 * sender on the same address almost all of the ingress's per-address cap.
 */
export const INGRESS_CONNECTIONS = 4;
/**
 * Accounts per hello call: a restart of 1,000 accounts is 4 calls, each well under the ingress's body bound and its
 * hellos per second per address, and each account's hello costs the ingress a few Redis round trips.
 */
const HELLO_BATCH = 250;
/** A session hello's body stays well under the service's 8 MiB: an account's symbols list can weigh 500 KiB. */
const HELLO_MAX_BYTES = 6 * 1024 * 1024;
/** Reports calls weigh little; trades calls carry books (up to 400 KiB each) under the service's 8 MiB. */
const REPORTS_MAX_BYTES = 3 * 1024 * 1024;
const TRADES_MAX_BYTES = 6 * 1024 * 1024;

interface Group {
  token: string | undefined;
  members: Map<string, SessionMember>;
  helloing: Promise<void> | undefined;
  loop: Promise<void> | undefined;
  reports: CallBatcher;
  trades: CallBatcher;
}

export class BridgeFleet {
  readonly stats = { sessionHellos: 0, polls: 0, sessions: 0 };
  private running = false;
  private readonly abort = new AbortController();
  private readonly agents;
  private readonly client: SessionClient;
  private limits = { accountsPerSession: 10_000, accountsPerCall: 1_000 };
  private readonly groups: Group[] = [];
  private readonly members = new Map<string, SessionMember>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly opts: FleetOptions) {
    this.agents = boundedAgents(INGRESS_CONNECTIONS);
    this.client = new SessionClient({
      ingressUrl: opts.ingressUrl,
      transport: nodeHttpTransport(this.agents),
      signal: this.abort.signal,
      sleep: (ms) => this.sleep(ms),
      diag: opts.diag,
    });
  }

  /** The accounts' hellos and loops; returns at once (hellos go on in the background, in batches). */
  start(accounts: FleetAccount[]): void {
    this.running = true;
    for (const account of accounts) this.join(account);
  }

  /** One more account on the running process (a newly linked one). */
  add(account: FleetAccount): void {
    if (this.members.has(account.accountId)) throw new Error(`account ${account.accountId} is already served`);
    this.join(account);
  }

  /**
   * The account is served no more. Commands the session takes for it from now on are not run: they go out again
   * after its next hello (under this process or another), as any command handed out and not reported.
   */
  async remove(accountId: string): Promise<void> {
    const member = this.members.get(accountId);
    if (member) {
      this.members.delete(accountId);
      member.lost();
      for (const g of this.groups) {
        if (!g.members.delete(accountId)) continue;
        g.reports.drop(accountId, new Error(`${accountId} left the session`));
        g.trades.drop(accountId, new Error(`${accountId} left the session`));
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    await Promise.allSettled([...this.groups.map((g) => g.loop), ...this.inFlight]);
    for (const agent of Object.values(this.agents)) agent.destroy();
  }

  // ---- sessions ------------------------------------------------------------------------------------------------

  private join(account: FleetAccount): void {
    const member = new SessionMember(account);
    this.members.set(account.accountId, member);
    const cap = Math.min(this.opts.accountsPerSession ?? Infinity, this.limits.accountsPerSession);
    const group = this.groups.find((g) => g.members.size < cap) ?? this.newGroup();
    group.members.set(account.accountId, member);
    member.calls = group;
    // Its loop starts with its first account in it (a loop of an empty session would find no one to say hello for).
    if (!group.loop) group.loop = this.loop(group);
    else if (group.token) this.kickHello(group);
  }

  private newGroup(): Group {
    const batcher = (what: 'reports' | 'trades', maxBytes: number) =>
      new CallBatcher({
        what,
        send: (items) => (group.token ? this.client.perAccount(what, group.token, items) : Promise.reject(new Error('no session yet'))),
        maxItems: () => this.limits.accountsPerCall,
        maxBytes,
        sleep: (ms) => this.sleep(ms),
        signal: this.abort.signal,
        backoff: this.backoff(),
        diag: this.opts.diag,
      });
    const group: Group = {
      token: undefined,
      members: new Map(),
      helloing: undefined,
      loop: undefined,
      reports: batcher('reports', REPORTS_MAX_BYTES),
      trades: batcher('trades', TRADES_MAX_BYTES),
    };
    this.groups.push(group);
    this.stats.sessions = this.groups.length;
    // Each session's long-poll holds a connection; the calls share the rest.
    for (const agent of Object.values(this.agents)) agent.maxSockets = Math.max(INGRESS_CONNECTIONS, this.groups.length + 2);
    return group;
  }

  private backoff() {
    return { initialMs: this.opts.backoff?.initialMs ?? 50, maxMs: this.opts.backoff?.maxMs ?? 1000 };
  }

  /** One session's loop: its hellos due (all of them before the first poll), its long-poll, its heartbeats. */
  private async loop(g: Group): Promise<void> {
    const { initialMs, maxMs } = this.backoff();
    let delay = initialMs;
    let lastError: string | undefined;
    while (this.running) {
      try {
        this.kickHello(g);
        await g.helloing;
        if (!this.running) break;
        if (!g.token) {
          // Every account was refused: look again when the first of them may say hello again (a registry being
          // re-imported admits them a second later), and within a backoff for an account that joins meanwhile.
          const next = Math.min(...[...g.members.values()].map((m) => m.helloAfter));
          await this.sleep(Math.min(maxMs, Math.max(initialMs, next - Date.now())));
          continue;
        }
        const answer = await this.client.commands(g.token, this.opts.waitMs ?? 20_000);
        this.stats.polls++;
        delay = initialMs;
        lastError = undefined;
        this.took(g, answer);
        this.heartbeats(g);
      } catch (err) {
        if (!this.running) break;
        // The session lapsed or is unknown: every account says hello again, into a new session.
        if (err instanceof HttpStatusError && err.status === 401) {
          g.token = undefined;
          for (const m of g.members.values()) m.lost();
        }
        const message = (err as Error)?.message ?? String(err);
        if (message !== lastError)
          this.opts.diag({ time: new Date().toISOString(), event: 'connection_error', accounts: g.members.size, error: message, retryInMs: delay });
        lastError = message;
        await this.sleep(delay);
        delay = Math.min(delay * 2, maxMs);
      }
    }
  }

  private kickHello(g: Group): void {
    g.helloing ??= this.helloDue(g).finally(() => (g.helloing = undefined));
  }

  /** Says hello for the session's accounts it does not serve yet, a batch a call, one call at a time. */
  private async helloDue(g: Group): Promise<void> {
    for (;;) {
      if (!this.running) return;
      const now = Date.now();
      const due = [...g.members.values()].filter((m) => !m.online && m.helloAfter <= now);
      if (due.length === 0) return;
      const items = await this.helloItems(due.slice(0, HELLO_BATCH));
      if (items.length === 0) continue;
      const answer = await this.client.hello(
        items.map((i) => i.item),
        g.token,
      );
      this.stats.sessionHellos++;
      this.limits = answer.limits;
      if (answer.session && answer.session !== g.token) {
        // A new session (the last lapsed): it serves only this batch, so the others say hello again too.
        for (const m of g.members.values()) if (!items.some((i) => i.member === m)) m.lost();
        g.token = answer.session;
      }
      answer.accounts.forEach((a, i) => {
        const { member, item } = items[i] ?? {};
        if (!member || !item || a.accountId !== member.accountId || !g.members.has(member.accountId)) return;
        if (a.result !== 'admitted') {
          member.refusals++;
          member.helloAfter = Date.now() + refusedHelloRetryMs(member.refusals);
          this.opts.diag({ time: new Date().toISOString(), event: 'hello_refused', accountId: member.accountId, status: a.status, error: a.error });
          return;
        }
        member.online = true;
        member.refusals = 0;
        member.arming = armingOf(a.stopOut);
        // What sends beside the loop starts once the account is served: before, it would have nowhere to send.
        if (!member.linked) member.account.withLink(member);
        member.linked = true;
        if (item.account) member.figuresSentAt = Date.now();
        member.account.stats.hellos++;
        member.account.peer.helloDone({ accountId: typeof a.accountId === 'string' ? a.accountId : undefined });
      });
    }
  }

  /** The hello bodies of a batch, within the call's bytes; an account whose body cannot be read now waits a while. */
  private async helloItems(batch: SessionMember[]): Promise<{ member: SessionMember; item: SessionHelloItem }[]> {
    const read = await Promise.all(
      batch.map(async (member) => {
        try {
          const body = await member.account.peer.helloBody();
          return { member, item: { ...body, accountId: member.accountId, bridgeToken: member.account.bridgeToken } };
        } catch (err) {
          member.helloAfter = Date.now() + this.backoff().maxMs;
          this.opts.diag({
            time: new Date().toISOString(),
            event: 'connection_error',
            accountId: member.accountId,
            error: (err as Error)?.message ?? String(err),
          });
          return undefined;
        }
      }),
    );
    const out: { member: SessionMember; item: SessionHelloItem }[] = [];
    let bytes = 0;
    for (const r of read) {
      if (!r) continue;
      const size = JSON.stringify(r.item).length;
      if (out.length > 0 && bytes + size > HELLO_MAX_BYTES) break;
      out.push(r);
      bytes += size;
    }
    return out;
  }

  /** One poll's answer: the stop-out directives, the accounts dropped, and each account's commands to its lane. */
  private took(g: Group, answer: SessionPollAnswer): void {
    for (const m of g.members.values()) if (m.online) m.arming = armingOf(answer.stopOuts[m.accountId]);
    for (const id of answer.dropped) {
      const m = g.members.get(id);
      if (!m?.online) continue;
      m.lost();
      this.opts.diag({ time: new Date().toISOString(), event: 'account_dropped', accountId: id, hint: 'its bridge token changed or the account is gone' });
    }
    for (const id of answer.superseded)
      this.opts.diag({ time: new Date().toISOString(), event: 'poll_superseded', accountId: id, hint: 'another bridge uses this token' });
    for (const { accountId, commands } of answer.accounts) {
      const m = g.members.get(accountId);
      if (!m?.online) {
        this.opts.diag({
          time: new Date().toISOString(),
          event: 'commands_not_run',
          accountId,
          commands: commands.length,
          hint: 'they go out again after its next hello',
        });
        continue;
      }
      m.account.stats.polls++;
      this.track(
        this.run(
          g,
          m,
          commands.slice().sort((a, b) => a.seq - b.seq),
        ),
      );
    }
  }

  /** An account's batch in its lane, then its reports (with its figures) in the session's next reports call. */
  private async run(g: Group, m: SessionMember, commands: unknown[]): Promise<void> {
    const epoch = m.epoch;
    const { peer } = m.account;
    const { reports, lost } = await handleBatch({ ...m.account, diag: this.opts.diag }, commands, () => this.running && m.epoch === epoch);
    try {
      if (reports.length > 0) {
        if (peer.dropReports?.(reports)) throw new Error('reports dropped');
        const results = await m.sendReports(reports, lost === undefined ? await peer.figures() : undefined);
        m.account.stats.reportsSent += reports.length;
        for (const r of results)
          if (r.result === 'unknown')
            this.opts.diag({ time: new Date().toISOString(), event: 'report_unknown_command', accountId: m.accountId, commandId: r.commandId });
      }
      if (lost !== undefined) throw asError(lost);
    } catch (err) {
      if (!this.running || m.epoch !== epoch) return;
      // As an account's own loop would: the account says hello again, and what it did not report comes again.
      m.lost();
      this.opts.diag({
        time: new Date().toISOString(),
        event: 'connection_error',
        accountId: m.accountId,
        error: (err as Error)?.message ?? String(err),
        commands: commands.map(commandIdOf),
      });
      this.kickHello(g);
    }
  }

  /** The figures of every account nothing carried them for a while, in the session's reports calls. */
  private heartbeats(g: Group): void {
    const every = this.opts.heartbeatMs ?? 30_000;
    if (every <= 0) return;
    const now = Date.now();
    for (const m of g.members.values()) {
      if (!m.online || now - m.figuresSentAt < every) continue;
      m.figuresSentAt = now;
      this.track(
        (async () => {
          const figures = await m.account.peer.figures();
          if (!figures) return;
          await m.sendReports([], figures);
          m.account.stats.heartbeats++;
        })().catch(() => undefined),
      );
    }
  }

  // ---- helpers ----------------------------------------------------------------------------------------------------

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
  }

  private sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.abort.signal);
  }
}

function armingOf(raw: unknown): StopOutDirective | undefined {
  const parsed = raw === undefined ? undefined : stopOutDirectiveSchema.safeParse(raw);
  return parsed?.success ? parsed.data : undefined;
}
