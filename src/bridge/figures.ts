import type { Redis } from 'ioredis';
import { accountFiguresSchema, type AccountFigures } from '../domain/bridge-protocol';

/**
 * The latest account figures each bridge sent (balance, equity, margin, free margin, currency), with when: what an
 * owner or operator reads to see the account's money (`admin account show`). Kept a week; a bridge sends them with
 * every report and in a heartbeat when it has nothing to report.
 */
export interface FiguresStore {
  record(accountId: string, figures: AccountFigures, atMs: number): Promise<void>;
  latest(accountId: string): Promise<{ figures: AccountFigures; at: string } | undefined>;
}

const KEEP_SECONDS = 7 * 24 * 3600;

export class RedisFigures implements FiguresStore {
  constructor(private readonly redis: Redis) {}

  private key(accountId: string): string {
    return `es:figures:{${accountId}}`;
  }

  async record(accountId: string, figures: AccountFigures, atMs: number): Promise<void> {
    await this.redis.set(this.key(accountId), JSON.stringify({ figures, at: new Date(atMs).toISOString() }), 'EX', KEEP_SECONDS);
  }

  async latest(accountId: string): Promise<{ figures: AccountFigures; at: string } | undefined> {
    const text = await this.redis.get(this.key(accountId));
    if (text === null) return undefined;
    const saved = JSON.parse(text) as { figures: unknown; at: string };
    const figures = accountFiguresSchema.safeParse(saved.figures);
    return figures.success ? { figures: figures.data, at: saved.at } : undefined;
  }
}
