/**
 * The spec's own numbers (§8), once: fixed, never settings. The config carries them (a test may shorten them on its
 * Config, test/helpers/stack.ts); the schema, the OpenAPI text, the client and the error messages name them from here.
 */
export const SPEC_LIMITS = {
  /** X-Idempotency-Key (or the idempotencyKey field): at most this many characters. */
  idempotencyKeyMaxLength: 128,
  /** A JSON body larger than this is refused with 413. */
  bodyLimitBytes: 64 * 1024,
  /** The same key within this window replays the first answer. */
  replayWindowMs: 45_000,
} as const;

/**
 * How long a command may wait for its bridge when the account sets no age of its own. A market entry: 30 s, past which
 * the price the alert fired at is gone (the account's maxSignalAgeMs overrides it). Any other command (pending entries,
 * closes, modifies): 5 minutes, a bridge's reconnect after a network drop, after which acting surprises the trader.
 */
export const COMMAND_AGES = {
  marketEntryMs: 30_000,
  otherMs: 300_000,
} as const;

/** "64 KB" for 65536. */
export function formatBytes(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KB` : `${bytes} bytes`;
}
