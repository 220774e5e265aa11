/**
 * A fault from `PAPER_FAULT` / `--fault`, comma-separated: `drop-before-report:<n>[@accountId]`, or
 * `crash-before-fill[@accountId]` / `crash-after-fill[@accountId]` (the process dies with SIGKILL at that point of the
 * first command that reaches the broker: what the bridge conformance suite uses for its crash tests), or
 * `crash-after-stop-out-mark[@accountId]` (it dies once the stop-out's mark is on disk, before anything is closed), or
 * `hold-trade-events[@accountId]` (its trade events stay in the outbox, never sent: what a restart must then deliver).
 */
export type Fault =
  | { kind: 'drop-before-report'; times: number; accountId?: string }
  | { kind: 'crash-before-fill' | 'crash-after-fill' | 'crash-after-stop-out-mark'; accountId?: string }
  | { kind: 'hold-trade-events'; accountId?: string };

export function parseFaults(spec: string | undefined): Fault[] {
  if (!spec || spec.trim() === '') return [];
  return spec.split(',').map((part): Fault => {
    const drop = /^drop-before-report:(\d+)(?:@([A-Za-z0-9._-]+))?$/.exec(part.trim());
    if (drop) return { kind: 'drop-before-report', times: Number(drop[1]), ...(drop[2] ? { accountId: drop[2] } : {}) };
    const crash = /^(crash-before-fill|crash-after-fill|crash-after-stop-out-mark)(?:@([A-Za-z0-9._-]+))?$/.exec(part.trim());
    if (crash)
      return { kind: crash[1] as 'crash-before-fill' | 'crash-after-fill' | 'crash-after-stop-out-mark', ...(crash[2] ? { accountId: crash[2] } : {}) };
    const hold = /^hold-trade-events(?:@([A-Za-z0-9._-]+))?$/.exec(part.trim());
    if (hold) return { kind: 'hold-trade-events', ...(hold[1] ? { accountId: hold[1] } : {}) };
    throw new Error(
      `unknown fault "${part}"; expected drop-before-report:<n>[@accountId] or crash-before-fill|crash-after-fill|crash-after-stop-out-mark|hold-trade-events[@accountId]`,
    );
  });
}
