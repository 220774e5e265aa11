import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import { setTimeout as delay } from 'node:timers/promises';
import { post, get } from '../../support/http';

/** How soon a scripted bridge polls again after a 503 (a real one waits the Retry-After). */
const RETRY_503_MS = 200;

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

  /**
   * Long-polls until `n` commands have arrived or the deadline passes. A 503 (the ingress's Redis reconnecting) is
   * polled again, as a bridge does after its Retry-After, only sooner: the deadline bounds the wait.
   */
  async nextCommands(n: number, deadlineMs = 10_000): Promise<BridgeCommand[]> {
    const out: BridgeCommand[] = [];
    const until = Date.now() + deadlineMs;
    while (out.length < n && Date.now() < until) {
      const res = await get(`${this.ingressUrl}/bridge/v1/commands?waitMs=${Math.min(2000, until - Date.now())}`, this.auth());
      if (res.status === 503) {
        await delay(Math.min(RETRY_503_MS, Math.max(until - Date.now(), 0)));
        continue;
      }
      if (res.status !== 200) throw new Error(`commands answered ${res.status}: ${res.text}`);
      for (const c of res.body.commands as BridgeCommand[]) if (!out.some((o) => o.commandId === c.commandId)) out.push(c);
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
