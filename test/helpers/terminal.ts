import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import { post, get } from '../../support/http';

/**
 * A scripted terminal for integration tests: speaks the bridge API over HTTP exactly as an EA would, but lets the
 * test decide what each command's report says. The paper bridge (src/paper) is the full simulation; e2e tests use it.
 */
export class ScriptedTerminal {
  constructor(
    private readonly ingressUrl: string,
    private readonly bridgeToken: string,
    private readonly platform: 'mt5' | 'ctrader' = 'mt5',
    private readonly bridgeVersion = '2.1.0',
    /** What the scripted bridge announces in hello (e.g. trade_events, protocol 1.5). */
    private readonly capabilities: string[] = [],
  ) {}

  private auth() {
    return { authorization: `Bearer ${this.bridgeToken}` };
  }

  async hello(symbols?: Record<string, unknown>[]) {
    const res = await post(
      `${this.ingressUrl}/bridge/v1/hello`,
      { platform: this.platform, bridgeVersion: this.bridgeVersion, capabilities: this.capabilities, ...(symbols ? { symbols } : {}) },
      this.auth(),
    );
    if (res.status !== 200) throw new Error(`hello answered ${res.status}: ${res.text}`);
    return res.body;
  }

  async commands(waitMs = 5000): Promise<BridgeCommand[]> {
    const res = await get(`${this.ingressUrl}/bridge/v1/commands?waitMs=${waitMs}`, this.auth());
    if (res.status !== 200) throw new Error(`commands answered ${res.status}: ${res.text}`);
    return res.body.commands as BridgeCommand[];
  }

  /** Long-polls until `n` commands have arrived or the deadline passes. */
  async nextCommands(n: number, deadlineMs = 10_000): Promise<BridgeCommand[]> {
    const out: BridgeCommand[] = [];
    const until = Date.now() + deadlineMs;
    while (out.length < n && Date.now() < until) {
      for (const c of await this.commands(Math.min(2000, until - Date.now()))) if (!out.some((o) => o.commandId === c.commandId)) out.push(c);
    }
    if (out.length < n) throw new Error(`expected ${n} commands, got ${out.length} before the deadline`);
    return out;
  }

  async report(reports: Record<string, unknown>[]) {
    const res = await post(`${this.ingressUrl}/bridge/v1/reports`, { reports }, this.auth());
    if (res.status !== 200) throw new Error(`reports answered ${res.status}: ${res.text}`);
    return res.body;
  }
}
