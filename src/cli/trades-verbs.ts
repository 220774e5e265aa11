import { accountId } from './args';
import { repairJournalClock, type ClockRepair } from '../trades/clock-repair';
import { plural, type Verb } from './verb-context';

/** The trade journal's verbs of the admin CLI (docs/trades.md). */

export const tradesRepairClock: Verb = {
  words: ['trades', 'repair-clock'],
  usage: 'trades repair-clock [ID...]',
  summary: 'Bring back to the clock the trade journal times a terminal ahead of UTC left (every account without an ID).',
  options: {},
  async run(args, ctx) {
    args.positionals.forEach((id) => accountId(id));
    const ids = args.positionals.length > 0 ? args.positionals : await (await ctx.registry()).listAccountIds();
    const redis = await ctx.redis();
    const repairs: ClockRepair[] = [];
    for (const id of ids) repairs.push(await repairJournalClock(redis, id, ctx.now()));
    const touched = repairs.filter((r) => r.repaired.length > 0 || r.bookDropped || r.lastEvent.before !== r.lastEvent.after);
    const line = (r: ClockRepair) =>
      `${r.accountId}: ${plural(r.repaired.length, 'trade')} repaired (${r.reopened.length} open again), book ${r.bookDropped ? 'dropped' : 'kept'}, last event ${r.lastEvent.before ?? '-'} -> ${r.lastEvent.after ?? '-'}`;
    return {
      human: touched.length === 0 ? `no journal past the clock (${plural(ids.length, 'account')} read)` : touched.map(line).join('\n'),
      json: touched,
    };
  },
};
