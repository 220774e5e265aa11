import { randomBytes } from 'node:crypto';
import { RedisStopOuts } from '../../src/bridge/stop-outs';
import { PayloadType } from '../../src/ctrader/messages';
import { connectorSetup, linkedAccounts, startConnectorProcess, type ConnectorProcess } from '../helpers/ctrader-connector';
import { CtraderDouble } from '../helpers/ctrader-double';
import { ensureBuilt } from '../../support/processes';
import { waitFor } from '../../support/infra';
import { post, pollUntilReported, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * The cTrader connector's stop-out as its own process, between the real service and the Open API double
 * (docs/ctrader-connector.md, "The copy-trading stop-out"): the answer to one ProtoOAClosePositionReq is lost on the
 * way back (the connection drops after the broker closed it); the connector finishes from the broker's state, and
 * no close or cancel is sent twice.
 */

const CTID = 7_100_001;

describe("the cTrader connector's stop-out, with a lost answer", () => {
  let stack: Stack;
  let fixture: Fixture;
  let double: CtraderDouble;
  let connector: ConnectorProcess | undefined;

  beforeAll(async () => {
    ensureBuilt();
    stack = await startStack();
    fixture = await seedOwner(stack.registry, [
      { platform: 'ctrader', bridgeVersion: '1.0.0', risk: { lossGuards: { maxDrawdownPercent: 5, stopOut: true } } as never },
    ]);
    const application = { clientId: `app_${randomBytes(4).toString('hex')}`, clientSecret: `secret_${randomBytes(16).toString('hex')}` };
    const grant = { accessToken: `at_${randomBytes(16).toString('hex')}`, refreshToken: `rt_${randomBytes(16).toString('hex')}` };
    double = await CtraderDouble.start({ ...application, accounts: [{ ctid: CTID, ...grant }] });
    connector = await startConnectorProcess({
      setup: connectorSetup('stop-out', application, linkedAccounts(fixture.accounts, [CTID], [grant])),
      accountIds: [fixture.accounts[0]!.id],
      demoUrl: double.url,
      ingressUrl: stack.ingress.url,
      label: 'stop-out',
    });
  }, 120_000);

  afterAll(async () => {
    await connector?.stop();
    await double?.close();
    await stack?.stop();
  });

  const filled = async (body: Record<string, unknown>) => {
    const res = await post(`${stack.ingress.url}/webhook/custom/${fixture.accounts[0]!.id}`, { secret: fixture.secret, ...body });
    expect(res.status).toBe(202);
    const outcome = (await pollUntilReported(stack.ingress.url, res.body.signalId, fixture.token, 1, 20_000)).accounts[0];
    expect(outcome).toMatchObject({ outcome: 'filled' });
    return outcome.ticket as string;
  };
  const mine = (payloadType: number) => double.requests(payloadType).filter((p) => p.ctidTraderAccountId === CTID);

  test('when equity falls past the limit and the first close loses its answer, then every position is closed and the order cancelled with one request each, and the service records it once', async () => {
    const positions = [await filled({ action: 'buy', symbol: 'EURUSD', volume: 3 }), await filled({ action: 'buy', symbol: 'EURUSD', volume: 2 })];
    const order = await filled({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.05 });
    double.loseAnswerTo(PayloadType.PROTO_OA_CLOSE_POSITION_REQ);
    // 5 lots bought at the ask 1.0851, now bid 1.0750: 5,050 USD below the peak of about 99,950.
    double.setQuote('EURUSD', 1.075, 1.0751);
    await waitFor('the stop-out to close everything', async () => double.account(CTID).positions.size === 0 && double.account(CTID).orders.size === 0, 30_000);
    const recorded = await waitFor('the service to record the stop-out', () => new RedisStopOuts(stack.redis).latest(fixture.accounts[0]!.id), 30_000);
    expect(recorded).toMatchObject({ eventId: 'stop-out/initial', closed: 2, cancelled: 1, failed: 0 });
    expect(
      mine(PayloadType.PROTO_OA_CLOSE_POSITION_REQ)
        .map((p) => String(p.positionId))
        .sort(),
    ).toEqual([...positions].sort());
    expect(mine(PayloadType.PROTO_OA_CANCEL_ORDER_REQ).map((p) => String(p.orderId))).toEqual([order]);
  }, 90_000);
});
