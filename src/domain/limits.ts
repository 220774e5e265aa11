/**
 * The spec's own numbers (§8), once. Config takes them as defaults (tests may shorten them); the schema, the OpenAPI
 * text, the client and the error messages name them from here.
 */
export const SPEC_LIMITS = {
  /** X-Idempotency-Key (or the idempotencyKey field): at most this many characters. */
  idempotencyKeyMaxLength: 128,
  /** A JSON body larger than this is refused with 413. */
  bodyLimitBytes: 64 * 1024,
  /** The same key within this window replays the first answer. */
  replayWindowMs: 45_000,
} as const;

/** "64 KB" for 65536. */
export function formatBytes(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KB` : `${bytes} bytes`;
}
