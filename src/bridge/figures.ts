import type { Redis } from 'ioredis';
import { accountFiguresSchema, type AccountFigures } from '../domain/bridge-protocol';
import { equityMember, journalKeys } from '../trades/journal';
import { runScript } from '../registry/scripts';
import { bridgeKeys } from '../redis-keys';

/**
 * The latest account figures each bridge sent (balance, equity, margin, free margin, currency), with when: what an
 * owner or operator reads to see the account's money (`admin account show`). Kept a week; a bridge sends them with
 * every report, in a heartbeat when it has nothing to report, and with its trade events.
 *
 * Every bridge's figures pass here, so here the equity curve is sampled (docs/trades.md): at most one point a minute
 * per account, in the same step that keeps the figures, and points past the journal's retention go in that step too.
 */
export interface FiguresStore {
  record(accountId: string, figures: AccountFigures, atMs: number): Promise<void>;
  latest(accountId: string): Promise<{ figures: AccountFigures; at: string } | undefined>;
}

const KEEP_SECONDS = 7 * 24 * 3600;
const EQUITY_POINT_EVERY_MS = 60_000;
const DEFAULT_CURVE_KEEP_MS = 90 * 86_400_000;

// KEYS: figures, equity curve. ARGV: figures JSON, keep seconds, now ms, point, every ms, curve keep ms.
const RECORD = `
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
local now = tonumber(ARGV[3])
local last = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if last[2] == nil or now - tonumber(last[2]) >= tonumber(ARGV[5]) then
  redis.call('ZADD', KEYS[2], now, ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - tonumber(ARGV[6])))
  return 1
end
return 0
`;

export class RedisFigures implements FiguresStore {
  /** `curveKeepMs`: TRADE_JOURNAL_RETENTION_DAYS, in ms. */
  constructor(
    private readonly redis: Redis,
    private readonly curveKeepMs = DEFAULT_CURVE_KEEP_MS,
  ) {}

  private key(accountId: string): string {
    return bridgeKeys.figures(accountId);
  }

  async record(accountId: string, figures: AccountFigures, atMs: number): Promise<void> {
    const text = JSON.stringify({ figures, at: new Date(atMs).toISOString() });
    const point = equityMember(atMs, figures.balance, figures.equity);
    const keys = [this.key(accountId), journalKeys(accountId).equity];
    await runScript(this.redis, RECORD, keys, [text, KEEP_SECONDS, atMs, point, EQUITY_POINT_EVERY_MS, this.curveKeepMs]);
  }

  async latest(accountId: string): Promise<{ figures: AccountFigures; at: string } | undefined> {
    const text = await this.redis.get(this.key(accountId));
    if (text === null) return undefined;
    const saved = JSON.parse(text) as { figures: unknown; at: string };
    const figures = accountFiguresSchema.safeParse(saved.figures);
    return figures.success ? { figures: figures.data, at: saved.at } : undefined;
  }
}
