/**
 * The equity marks the loss guards compare against (docs/risk-sizing.md): the trading day's opening equity and the
 * highest equity seen, kept by the bridge as it sees its account. Every bridge keeps them on disk, so a restart on a
 * bad day still measures from the opening it saw (the paper bridge in its state file, the cTrader connector beside
 * its command store, the MT5 bridge in `<journal>.marks.json`).
 */

/** What the marks are on disk. */
export interface EquityMarksState {
  day?: string;
  dayOpen: number;
  peak: number;
  resetApplied: string;
}

export class EquityMarks {
  private day: string | undefined;
  private dayOpen = 0;
  private peak = 0;
  private resetApplied = '';

  constructor(saved?: EquityMarksState) {
    if (!saved) return;
    this.day = saved.day;
    this.dayOpen = saved.dayOpen;
    this.peak = saved.peak;
    this.resetApplied = saved.resetApplied;
  }

  state(): EquityMarksState {
    return { ...(this.day !== undefined ? { day: this.day } : {}), dayOpen: this.dayOpen, peak: this.peak, resetApplied: this.resetApplied };
  }

  /**
   * Records the equity now; the first reading of a trading day (in `timezone`) is that day's opening equity. An
   * owner's reset newer than the last one applied starts the peak again from this equity.
   */
  observe(equity: number, nowMs: number, timezone: string, drawdownResetAt?: string): { dayOpen: number; peak: number } {
    this.observePeak(equity, drawdownResetAt);
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(nowMs);
    if (day !== this.day) {
      this.day = day;
      this.dayOpen = equity;
    }
    return { dayOpen: this.dayOpen, peak: this.peak };
  }

  /**
   * Records the equity for the drawdown alone (the stop-out's watch, which knows no trading day): an owner's reset
   * newer than the last one applied starts the peak again from this equity. The same peak the guard compares with.
   */
  observePeak(equity: number, drawdownResetAt?: string): number {
    // A reading that is no number must not become the peak (NaN would stay there, and on disk as null).
    if (!Number.isFinite(equity)) return this.peak;
    if (drawdownResetAt !== undefined && Date.parse(drawdownResetAt) > (Date.parse(this.resetApplied) || 0)) {
      this.resetApplied = drawdownResetAt;
      this.peak = equity;
    }
    this.peak = Math.max(this.peak, equity);
    return this.peak;
  }
}
