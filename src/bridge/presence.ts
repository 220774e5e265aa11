/** Which accounts' bridges polled this ingress recently (for the bridges-online metric). Bounded by account count. */
export class BridgePresence {
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly windowMs = 60_000) {}

  seen(accountId: string): void {
    this.lastSeen.set(accountId, Date.now());
  }

  online(): number {
    const since = Date.now() - this.windowMs;
    let n = 0;
    for (const [id, at] of this.lastSeen) {
      if (at >= since) n++;
      else this.lastSeen.delete(id);
    }
    return n;
  }
}
