import { coalescedTradeCallbackWorkflow } from '../../workflows';
import type { CoalescedTradeEvent } from '../../src/domain/callback';
import { coalescedTradeCallbackWorkflowId } from '../../src/domain/ids';
import { queueDouble, useWorkflowKit } from './kit';

/**
 * An owner's minute of trade events past the callbacks' cap (src/callbacks/trade-coalescing.ts) in virtual time: the
 * coalesced delivery waits for the minute's end, reads what was kept once, and sends each endpoint the events it
 * wants in one message. A file of its own: a delivery left retrying by another file's test holds the test server's
 * time still.
 */

const workflowKit = useWorkflowKit();

describe("an owner's coalesced trade events", () => {
  const modified = (webhookId: string, endpointIds: string[]): CoalescedTradeEvent => ({
    webhookId,
    endpointIds,
    event: {
      type: 'position.modified',
      timestamp: '2026-12-02T10:00:01.000Z',
      data: { accountId: 'acc-1', tradeId: '7', symbol: 'EURUSD', sl: 1.07, tp: 1.09, cause: 'trailing_stop' },
    },
  });

  test('when the minute has not ended, then nothing is read; once it ends, each endpoint gets the events it wants in one message', async () => {
    const { env } = workflowKit();
    const events = [modified('callback:trade:acc-1:a', ['ep_a', 'ep_b']), modified('callback:trade:acc-1:b', ['ep_b'])];
    const { activities, calls } = queueDouble({ coalesced: { events, omitted: 3 } });
    const now = await env.currentTimeMs();
    const window = Math.floor(now / 60_000) + 10;
    const input = { owner: 'alice', window, from: new Date(window * 60_000).toISOString(), endsAt: new Date((window + 1) * 60_000).toISOString() };
    await workflowKit().withWorker(activities, async (taskQueue) => {
      const workflowId = coalescedTradeCallbackWorkflowId('alice', window);
      const handle = await env.client.workflow.start(coalescedTradeCallbackWorkflow, { taskQueue, workflowId, args: [input] });
      // A second before the minute's end nothing is read yet.
      await env.sleep(Date.parse(input.endsAt) - (await env.currentTimeMs()) - 1_000);
      await handle.query('__stack_trace');
      expect(calls.coalescedReads).toEqual([]);
      expect(await handle.result()).toEqual({ ep_a: 'delivered', ep_b: 'delivered' });
      expect(await env.currentTimeMs()).toBeGreaterThanOrEqual(Date.parse(input.endsAt));
      expect(calls.coalescedReads).toEqual([['alice', window]]);
      const bodies = Object.fromEntries(calls.callbacks.map((c) => [c.endpointId, { messageId: c.messageId, body: JSON.parse(c.body) }]));
      const item = (e: CoalescedTradeEvent) => ({ webhookId: e.webhookId, ...e.event });
      const payload = (mine: CoalescedTradeEvent[]) => ({
        type: 'trade.coalesced',
        timestamp: input.endsAt,
        data: { from: input.from, to: input.endsAt, events: mine.map(item), omitted: 3 },
      });
      expect(bodies).toEqual({
        ep_a: { messageId: workflowId, body: payload([events[0]!]) },
        ep_b: { messageId: workflowId, body: payload(events) },
      });
    });
  });
});
