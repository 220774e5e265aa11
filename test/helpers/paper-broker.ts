import { ManualFeed, PaperBroker, type BrokerCommand, type BrokerOptions, type Platform } from '../../src/paper/broker';

/** The paper broker's unit tests share this: a broker on a steered feed and a clock the test moves. */

// Wednesday noon UTC: every market is open.
export const WEDNESDAY = Date.parse('2024-06-12T12:00:00Z');
export const SATURDAY = Date.parse('2024-06-15T12:00:00Z');

export function setup(platform: Platform = 'mt5', options: Partial<BrokerOptions> = {}) {
  let now = WEDNESDAY;
  const feed = new ManualFeed();
  feed.set('EURUSD', 1.085, 1.0851);
  feed.set('USDJPY', 150.0, 150.012);
  feed.set('XAUUSD', 2350.0, 2350.3);
  feed.set('US30', 39000, 39002);
  const broker = new PaperBroker({ platform, clock: () => now, feed, ...options });
  let n = 0;
  const run = (cmd: BrokerCommand) => broker.execute({ commandId: `cmd-${++n}`, ...cmd });
  return {
    broker,
    feed,
    run,
    at: (ms: number) => {
      now = ms;
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Opens a position and returns its ticket. */
export function open(run: ReturnType<typeof setup>['run'], cmd: Partial<BrokerCommand> & { action?: 'buy' | 'sell' } = {}): string {
  const { result } = run({ action: 'buy', symbol: 'EURUSD', volume: 1, ...cmd });
  expect(result.status).toBe('filled');
  return result.ticket!;
}
