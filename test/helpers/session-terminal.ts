import type { BridgeCommand, BridgeReport } from '../../src/domain/bridge-protocol';
import { get, post, type HttpResult } from '../../support/http';

/**
 * A scripted bridge for many accounts on one multi-account session (protocol 1.7), speaking the session calls over
 * HTTP as a real bridge would; the test decides each report.
 */
export class SessionTerminal {
  session: string | undefined;

  constructor(private readonly ingressUrl: string) {}

  /** The session hello; `session` is kept when at least one account was admitted. */
  async hello(accounts: { id: string; bridgeToken: string }[], platform: 'mt5' | 'ctrader' = 'mt5'): Promise<HttpResult> {
    const res = await post(`${this.ingressUrl}/bridge/v1/session/hello`, {
      accounts: accounts.map((a) => ({ accountId: a.id, bridgeToken: a.bridgeToken, platform, bridgeVersion: '2.1.0', capabilities: [] })),
    });
    if (res.status === 200 && res.body.session) this.session = res.body.session as string;
    return res;
  }

  private auth() {
    return { authorization: `Bearer ${this.session ?? ''}` };
  }

  poll(waitMs = 2000): Promise<HttpResult> {
    return get(`${this.ingressUrl}/bridge/v1/session/commands?waitMs=${waitMs}`, this.auth());
  }

  /** Long-polls until `n` commands (of any accounts) have arrived or the deadline passes. */
  async nextCommands(n: number, deadlineMs = 15_000): Promise<BridgeCommand[]> {
    const out = new Map<string, BridgeCommand>();
    const until = Date.now() + deadlineMs;
    while (out.size < n && Date.now() < until) {
      const res = await this.poll(Math.min(2000, until - Date.now()));
      if (res.status !== 200) throw new Error(`session commands answered ${res.status}: ${res.text}`);
      for (const a of res.body.accounts as { commands: BridgeCommand[] }[]) for (const c of a.commands) out.set(c.commandId, c);
    }
    if (out.size < n) throw new Error(`expected ${n} commands, got ${out.size} before the deadline`);
    return [...out.values()];
  }

  report(byAccount: { accountId: string; reports: BridgeReport[] }[]): Promise<HttpResult> {
    return post(
      `${this.ingressUrl}/bridge/v1/session/reports`,
      { accounts: byAccount.map(({ accountId, reports }) => ({ accountId, body: { reports } })) },
      this.auth(),
    );
  }
}
