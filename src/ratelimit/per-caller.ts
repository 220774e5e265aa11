/**
 * The per-caller limits (docs/configuration.md, RATE_LIMIT_SCALE): how many requests one caller may make per window.
 * Fixed numbers, not settings: each is sized to what a well-behaved caller of that route does, with room to spare,
 * so only a caller in a loop meets it. A deployment that knows its callers (one firm, a bench) raises them all at once
 * with RATE_LIMIT_SCALE; their ratios, and the windows, are ours.
 */
export interface WindowLimit {
  max: number;
  windowMs: number;
}

export const PER_CALLER_LIMITS = {
  /** Webhook requests per target account (else secret, else address) a minute: two a second, a busy alert's bar closes. */
  route: { max: 120, windowMs: 60_000 },
  /** The fairness throttle (spec §8) per target account on the per-account URL: 6 a second over 10 s. */
  fairnessAccount: { max: 60, windowMs: 10_000 },
  /** The fairness throttle per owner on the broadcast URL: the same as one account's, however many accounts it reaches. */
  fairnessBroadcast: { max: 60, windowMs: 10_000 },
  /** Status polls per client address a minute: ten a second, for the callers behind one address together. */
  pollIp: { max: 600, windowMs: 60_000 },
  /** Status polls per API token a minute: five a second, more than a poll loop that backs off needs. */
  pollAccount: { max: 300, windowMs: 60_000 },
  /** Bridge API requests per bridge token a minute: a long-poll every 25 s and a report per fill leave it far below. */
  bridge: { max: 600, windowMs: 60_000 },
} as const satisfies Record<string, WindowLimit>;

/**
 * Failed sign-ins per client address per 15 minutes; past it, 429 for that address only (never for the owner). A
 * brute-force bound, not a load one: RATE_LIMIT_SCALE does not raise it.
 */
export const SIGN_IN_IP_LIMIT: WindowLimit = { max: 20, windowMs: 15 * 60_000 };

/** Each per-caller limit with its max multiplied by `scale` (RATE_LIMIT_SCALE); the windows stay. */
export function scaledLimits(scale: number): { [K in keyof typeof PER_CALLER_LIMITS]: WindowLimit } {
  const entries = Object.entries(PER_CALLER_LIMITS).map(([name, l]) => [name, { max: l.max * scale, windowMs: l.windowMs }]);
  return Object.fromEntries(entries) as { [K in keyof typeof PER_CALLER_LIMITS]: WindowLimit };
}
