/**
 * The one Temporal client of the tests (docs/testing.md): the run's server and namespace unless told otherwise (a
 * fault scenario on a Temporal server of its own passes its address). The caller closes it.
 */
import { Client, Connection } from '@temporalio/client';
import { testEnv } from '../../support/env';

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
