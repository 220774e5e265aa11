import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { CallbackDeliveryStarter } from '../callbacks/trade-events';
import type { CallbackDeliveryInput, CoalescedDeliveryInput } from '../domain/callback';
import { coalescedTradeCallbackWorkflowId } from '../domain/ids';
import type { Regions } from './regions';
import { callbackWorkflow, coalescedTradeCallbackWorkflow } from '../../workflows/callback';

/** Starts callback deliveries that no workflow starts as its child: the trade events' (src/callbacks/trade-events.ts). */
export class TemporalCallbackDeliveries implements CallbackDeliveryStarter {
  constructor(
    private readonly regions: Regions,
    private readonly taskQueue: string,
  ) {}

  async start(region: string, workflowId: string, input: CallbackDeliveryInput): Promise<'started' | 'existed'> {
    try {
      await this.regions.call(region, (client) =>
        client.workflow.start(callbackWorkflow, {
          taskQueue: this.taskQueue,
          workflowId,
          args: [input],
          // Also after the first delivery closed (until the namespace's retention forgets it): one message per event.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          staticSummary: `${input.event.type} to ${input.endpointIds.length} callback endpoint(s)`,
        }),
      );
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'existed';
      throw err;
    }
  }

  async startCoalesced(region: string, input: CoalescedDeliveryInput): Promise<void> {
    try {
      await this.regions.call(region, (client) =>
        client.workflow.start(coalescedTradeCallbackWorkflow, {
          taskQueue: this.taskQueue,
          workflowId: coalescedTradeCallbackWorkflowId(input.owner, input.window),
          args: [input],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          staticSummary: `trade events coalesced until ${input.endsAt}`,
        }),
      );
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}
