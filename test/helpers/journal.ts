import type { Redis } from 'ioredis';
import type { TradeRecord } from '../../src/domain/trade-events';
import { RedisTradeJournal } from '../../src/trades/journal';

/** What the service's trade journal recorded for an account (docs/trades.md), read through its store's interface. */

export async function journalTrades(redis: Redis, accountId: string): Promise<TradeRecord[]> {
  const journal = new RedisTradeJournal(redis);
  const ids = await journal.list(accountId, { status: 'all', scan: 1_000 });
  const raw = await journal.readRaw(
    accountId,
    ids.map((i) => i.tradeId),
  );
  return raw.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as TradeRecord);
}

/** The trade of a broker ticket: the position's, or the pending order's (and the position it became). */
export async function journalTrade(redis: Redis, accountId: string, ticket: string): Promise<TradeRecord | undefined> {
  return (await journalTrades(redis, accountId)).find((t) => t.tradeId === ticket || t.tradeId === `order:${ticket}` || t.orderTicket === ticket);
}

/** Every eventId the journal holds for an account, trade by trade (a doubled event shows as a repeated id). */
export async function journalEventIds(redis: Redis, accountId: string): Promise<string[]> {
  return (await journalTrades(redis, accountId)).flatMap((t) => t.events.map((e) => e.eventId));
}
