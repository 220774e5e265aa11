import { randomBytes } from 'node:crypto';
import { ensureBuilt } from '../../support/processes';
import { connectorSetup, linkedAccounts, startConnectorProcess, type ConnectorProcess, type ConnectorSetup } from './ctrader-connector';
import { CtraderDouble } from './ctrader-double';
import { seedOwner, startStack, type Fixture, type Stack } from './stack';

/**
 * One cTrader account run end to end: the real service in-process (ingress, worker, the run's Temporal and Redis), an
 * Open API double holding the account, and the built connector as its own process with a state directory that
 * survives its restarts (`start` again after `connector.stop()` or a kill).
 */
export interface OneAccountRig {
  stack: Stack;
  fixture: Fixture;
  double: CtraderDouble;
  setup: ConnectorSetup;
  accountId: string;
  ctid: number;
  connector: ConnectorProcess | undefined;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function oneAccountRig(label: string, ctid: number): Promise<OneAccountRig> {
  ensureBuilt();
  const application = { clientId: `app_${randomBytes(4).toString('hex')}`, clientSecret: `secret_${randomBytes(16).toString('hex')}` };
  const grant = { accessToken: `at_${randomBytes(16).toString('hex')}`, refreshToken: `rt_${randomBytes(16).toString('hex')}` };
  const stack = await startStack();
  const fixture = await seedOwner(stack.registry, [{ platform: 'ctrader', bridgeVersion: '1.0.0' }]);
  const accountId = fixture.accounts[0]!.id;
  const double = await CtraderDouble.start({ ...application, accounts: [{ ctid, ...grant }] });
  const setup = connectorSetup(label, application, linkedAccounts(fixture.accounts, [ctid], [grant]));
  const rig: OneAccountRig = {
    stack,
    fixture,
    double,
    setup,
    accountId,
    ctid,
    connector: undefined,
    async start() {
      rig.connector = await startConnectorProcess({ setup, accountIds: [accountId], demoUrl: double.url, ingressUrl: stack.ingress.url, label });
    },
    async close() {
      await rig.connector?.stop();
      await double.close();
      await stack.stop();
    },
  };
  await rig.start();
  return rig;
}
