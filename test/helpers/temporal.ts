/**
 * The one Temporal client of the tests (docs/testing.md): the run's server and namespace unless told otherwise (a
 * fault scenario on a Temporal server of its own passes its address). The caller closes it.
 */
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { testEnv } from '../../support/env';
import { waitFor } from '../../support/run';

export interface TemporalView {
  client: Client;
  connection: Connection;
  readonly close: () => Promise<void>;
}

export async function temporalClient(opts: { address?: string; namespace?: string } = {}): Promise<TemporalView> {
  const env = testEnv();
  const connection = await Connection.connect({ address: opts.address ?? env.temporalAddress, connectTimeout: 5_000 });
  return { client: new Client({ connection, namespace: opts.namespace ?? env.temporalNamespace }), connection, close: () => connection.close() };
}

/**
 * Dispatch at acceptance hands a bridge its command before the account workflow may have run: a test that acts on
 * that workflow (ends it, or takes Redis's record of the command away) first waits until the workflow holds the
 * command, i.e. its first local activity (the adopt, or the enqueue when dispatch is off) is in its history.
 */
export async function waitForAccountWorkflowToHoldCommand(client: Client, commandId: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    `account workflow ${commandId} to take up its command`,
    async () => {
      const history = await client.workflow
        .getHandle(commandId)
        .fetchHistory()
        .catch(() => undefined);
      return history?.events?.some((e) => e.markerRecordedEventAttributes) === true;
    },
    timeoutMs,
  );
}

/** describe() of a workflow, or undefined while it does not exist. */
export async function describeOrUndefined(client: Client, workflowId: string) {
  try {
    return await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/**
 * Waits until the workflow exists and has closed, then returns its result. Throws when it closed other than
 * COMPLETED or did not close within the deadline. With dispatch at acceptance the poll can show a bridge's report
 * before the account workflow exists: this waits for the workflow, not for the poll.
 */
export async function workflowResult<T>(client: Client, workflowId: string, timeoutMs = 20_000): Promise<T> {
  const status = await waitFor(
    `workflow ${workflowId} to complete`,
    async () => {
      const d = await describeOrUndefined(client, workflowId);
      return d && d.status.name !== 'RUNNING' ? d.status.name : undefined;
    },
    timeoutMs,
    50,
  );
  if (status !== 'COMPLETED') throw new Error(`workflow ${workflowId} ended ${status}`);
  return (await client.workflow.getHandle(workflowId).result()) as T;
}
