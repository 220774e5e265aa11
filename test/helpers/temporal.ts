/**
 * The one Temporal client of the tests (docs/testing.md): the run's server and namespace unless told otherwise (a
 * fault scenario on a Temporal server of its own passes its address). The caller closes it.
 */
import { Client, Connection } from '@temporalio/client';
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

/**
 * The account workflow's result. With dispatch at acceptance the poll can show a bridge's report (recorded by the
 * ingress) before the account workflow exists (no worker ran its parent yet): wait for the workflow, then its end.
 */
export async function accountWorkflowResult<T = unknown>(client: Client, commandId: string, timeoutMs = 60_000): Promise<T> {
  await waitFor(
    `account workflow ${commandId} to exist`,
    () =>
      client.workflow
        .getHandle(commandId)
        .describe()
        .then(
          () => true,
          () => false,
        ),
    timeoutMs,
  );
  return (await client.workflow.getHandle(commandId).result()) as T;
}
