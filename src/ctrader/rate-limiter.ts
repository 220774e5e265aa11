/**
 * Open API allows 50 requests per second per connection (past it the proxy answers BLOCKED_PAYLOAD_TYPE /
 * REQUEST_FREQUENCY_EXCEEDED). A sliding window over the last second: `take()` resolves when one more request fits,
 * in the order the requests asked, so a burst of commands is spread out instead of refused.
 */
export class SlidingWindowLimiter {
  private readonly sent: number[] = [];
  private readonly waiting: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly perWindow: number,
    readonly windowMs = 1000,
    private readonly clock: () => number = Date.now,
  ) {
    if (!(perWindow >= 1)) throw new Error('perWindow must be at least 1');
  }

  take(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.drain();
    });
  }

  /** Requests sent within the current window (for tests and diagnostics). */
  inWindow(): number {
    this.expire(this.clock());
    return this.sent.length;
  }

  private expire(now: number): void {
    while (this.sent.length > 0 && this.sent[0]! <= now - this.windowMs) this.sent.shift();
  }

  private drain(): void {
    if (this.timer) return;
    const now = this.clock();
    this.expire(now);
    while (this.waiting.length > 0 && this.sent.length < this.perWindow) {
      this.sent.push(now);
      this.waiting.shift()!();
    }
    if (this.waiting.length === 0) return;
    const wait = Math.max(1, this.sent[0]! + this.windowMs - now);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drain();
    }, wait);
  }
}
