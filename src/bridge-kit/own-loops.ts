import { startAccountSession, type BridgeSession, type FleetAccount, type SessionConnection } from './session';

/** The next batch of accounts' own loops starts once the last batch said hello, or after this. */
const START_PACE_MS = 10_000;

/**
 * A multi-account process's accounts each on its own loop: what the fleet (src/bridge-kit/fleet.ts) runs when the
 * ingress serves no multi-account sessions (or they are turned off). Started a batch at a time, so a restart of
 * thousands of accounts does not send thousands of hellos at once.
 */
export class OwnLoops {
  private readonly loops = new Map<string, BridgeSession>();

  constructor(
    private readonly opts: Omit<SessionConnection, 'bridgeToken' | 'fetch'> & { diag: (line: Record<string, unknown>) => void },
    private readonly running: () => boolean,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  serves(accountId: string): boolean {
    return this.loops.has(accountId);
  }

  /** Each account's own loop, `batch` at a time: the next batch once the last said hello (or after a while). */
  async start(accounts: FleetAccount[], batch: number): Promise<void> {
    for (let i = 0; i < accounts.length && this.running(); i += batch) {
      const hellos = accounts.slice(i, i + batch).map((account) => this.startOne(account));
      await Promise.race([Promise.all(hellos), this.sleep(START_PACE_MS)]);
    }
  }

  async remove(accountId: string): Promise<void> {
    const loop = this.loops.get(accountId);
    this.loops.delete(accountId);
    await loop?.stop();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.loops.values()].map((s) => s.stop()));
  }

  private startOne(account: FleetAccount): Promise<void> {
    return new Promise<void>((said) => {
      const peer = {
        ...account.peer,
        helloDone: (answer: { accountId?: string }) => {
          account.peer.helloDone(answer);
          said();
        },
      };
      const { waitMs, heartbeatMs, backoff, ingressUrl, diag } = this.opts;
      const connection = { ingressUrl, waitMs, heartbeatMs, backoff, bridgeToken: account.bridgeToken };
      this.loops.set(account.accountId, startAccountSession(connection, { ...account, peer }, { diag }));
    });
  }
}
