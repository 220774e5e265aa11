import type { AdmissionLedger } from './admission';
import { groupBy } from './launch';

/**
 * Pairs of the admission ledger that will never settle: their acceptance round failed after writing them and could
 * not take them back, or the signal's workflow has closed without settling them (an operator terminated it). A pair
 * whose signal's start is still recorded in Redis is never one of them: that start is made from its record. No worker will ever take them up, so they would count as late until the
 * ledger's horizon (the longest command lifetime, minutes), and more than `ADMISSION_MAX_LATE` of them (an ingress
 * killed with that many signals in flight) would shut the door that long. While the door is shut, this looks at the
 * oldest pairs, old enough that their start has certainly ended, and forgets those whose signal is not running in
 * Temporal. It asks Temporal only while the door is shut, a bounded number of signals at a time, and keeps every pair
 * it cannot check (Temporal away): it fails closed.
 */

export interface LostStartSettings {
  /**
   * A pair accepted longer ago than this has had its start end, one way or the other. Longer than the idempotency
   * window: a replay inside it starts the signal under its first acceptance time.
   */
  afterMs: number;
  /** At most this many pairs looked at per sweep. */
  limit: number;
  /** At most one sweep per this many milliseconds. */
  everyMs: number;
}

export class LostStartSweep {
  private inFlight: Promise<number> | undefined;
  private lastAt = -Infinity;

  constructor(
    private readonly ledger: AdmissionLedger,
    /** Whether the signal's workflow runs in some region (its pairs may still settle); throws when that cannot be known now. */
    private readonly running: (signalId: string) => Promise<boolean>,
    private readonly settings: LostStartSettings,
    private readonly now: () => number = Date.now,
    private readonly onForgotten?: (pairs: number) => void,
  ) {}

  /** Starts a sweep unless one runs or ran within `everyMs`; for the gate to call on each reading that shuts the door. */
  nudge(): void {
    if (this.inFlight || this.now() - this.lastAt < this.settings.everyMs) return;
    void this.sweep();
  }

  /** One sweep: how many pairs it forgot. */
  sweep(): Promise<number> {
    this.inFlight ??= (async () => {
      this.lastAt = this.now();
      try {
        const pairs = await this.ledger.stalest(this.now() - this.settings.afterMs, this.settings.limit);
        let forgotten = 0;
        for (const [signalId, targets] of Object.entries(
          groupBy(
            pairs,
            (p) => p.signalId,
            (p) => p,
          ),
        )) {
          if (await this.running(signalId)) continue;
          await Promise.all(targets.map((t) => this.ledger.settled(t.signalId, t.accountId)));
          forgotten += targets.length;
        }
        if (forgotten > 0) this.onForgotten?.(forgotten);
        return forgotten;
      } catch {
        // Redis or Temporal away: the pairs stay, and the door stays as the ledger says.
        return 0;
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }
}
