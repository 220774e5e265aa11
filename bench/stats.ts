/** Small statistics and the result table: percentiles by nearest rank over the raw samples (no histogram buckets). */

export interface Summary {
  count: number;
  min: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

/** Nearest-rank percentile of an ascending array; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  return {
    count: n,
    min: n ? sorted[0]! : null,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: n ? sorted[n - 1]! : null,
    mean: n ? round(sorted.reduce((s, v) => s + v, 0) / n) : null,
  };
}

/** Median, p95 and max (nearest rank), in tenths: a timed repeat's figures. */
export function medianP95(values: readonly number[]): { median: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: round(percentile(sorted, 50)!, 1), p95: round(percentile(sorted, 95)!, 1), max: round(sorted.at(-1)!, 1) };
}

export function round(v: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

export type Verdict = 'met' | 'missed' | 'n/a' | '';

export interface Row {
  scenario: string;
  figure: string;
  value: number | null;
  unit: string;
  /** e.g. "≤ 50 ms"; empty when the figure is informational. */
  goal: string;
  verdict: Verdict;
  note?: string;
}

/** A figure with a goal `value op limit`; null values are n/a (the scenario did not run or produced nothing). */
export function goalRow(
  scenario: string,
  figure: string,
  value: number | null,
  unit: string,
  op: '<=' | '>=',
  limit: number,
  goalText?: string,
  note?: string,
): Row {
  const verdict: Verdict = value === null || !Number.isFinite(value) ? 'n/a' : (op === '<=' ? value <= limit : value >= limit) ? 'met' : 'missed';
  return { scenario, figure, value, unit, goal: goalText ?? `${op === '<=' ? '≤' : '≥'} ${limit}${unit ? ` ${unit}` : ''}`, verdict, note };
}

export function infoRow(scenario: string, figure: string, value: number | null, unit: string, note?: string): Row {
  return { scenario, figure, value, unit, goal: '', verdict: '', note };
}

function fmt(value: number | null, unit: string): string {
  if (value === null || !Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  const text = abs >= 100 ? value.toFixed(0) : abs >= 10 ? value.toFixed(1) : value.toFixed(2);
  return unit ? `${text} ${unit}` : text;
}

/** One plain-text table, fixed-width columns. */
export function renderTable(rows: readonly Row[]): string {
  const header = ['scenario', 'figure', 'measured', 'goal', 'result', 'note'];
  const body = rows.map((r) => [r.scenario, r.figure, fmt(r.value, r.unit), r.goal || '—', r.verdict || 'info', r.note ?? '']);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join(' │ ')
      .trimEnd();
  const sep = widths.map((w) => '─'.repeat(w)).join('─┼─');
  return [line(header), sep, ...body.map(line)].join('\n');
}
