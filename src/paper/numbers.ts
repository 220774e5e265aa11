import type { SymbolSpec } from './instruments';

/** The paper broker's arithmetic: price rounding, volume steps, and a tolerance for float comparisons. */

export const EPS = 1e-9;

export function roundTo(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f + (value >= 0 ? 1e-9 : -1e-9)) / f;
}

export function round2(value: number): number {
  return roundTo(value, 2);
}

export function volumeDecimals(spec: SymbolSpec): number {
  return Math.max(0, Math.ceil(-Math.log10(spec.volumeStep) - 1e-9));
}

export function isMultiple(value: number, step: number): boolean {
  const n = value / step;
  return Math.abs(n - Math.round(n)) < 1e-6;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
