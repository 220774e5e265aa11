import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RedisFigures } from '../../src/bridge/figures';
import { PayloadType } from '../../src/ctrader/messages';
import { connectorSetup, linkedAccounts, startConnectorProcess, type ConnectorProcess, type ConnectorSetup } from '../helpers/ctrader-connector';
import { CtraderDouble } from '../helpers/ctrader-double';
import { holdHelloBudget } from '../helpers/hello-window';
import { DEFAULT_SYMBOLS, type DoubleSymbol } from '../helpers/ctrader-symbols';
import { ENTRIES, ensureBuilt, type ServiceProcess } from '../../support/processes';
import { post, pollUntilReported, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { waitFor } from '../../support/infra';
/**
 * The cTrader connector as its own process between the real service (ingress and worker in-process against the run's
 * Temporal and Redis) and the Open API double: signals go through the ingress to the double and back to the poll with
 * the broker's ticket (the positionId). One connector process serves two accounts over one Open API connection.
 */

const application = { clientId: `app_${randomBytes(4).toString('hex')}`, clientSecret: `secret_${randomBytes(16).toString('hex')}` };
const CTIDS = [7_000_001, 7_000_002];
/** A fresh access and refresh token of an Open API account. */
const newGrant = () => ({ accessToken: `at_${randomBytes(16).toString('hex')}`, refreshToken: `rt_${randomBytes(16).toString('hex')}` });
describe('the cTrader connector between the service and Open API', () => {
  let stack: Stack;
  let fixture: Fixture;
  let double: CtraderDouble;
  let setup: ConnectorSetup;
  let connector: ConnectorProcess | undefined;
  const tokens = CTIDS.map(newGrant);

  beforeAll(async () => {
    ensureBuilt();
    stack = await startStack();
    fixture = await seedOwner(stack.registry, [
      { platform: 'ctrader', bridgeVersion: '1.0.0' },
      { platform: 'ctrader', bridgeVersion: '1.0.0' },
    ]);
    double = await CtraderDouble.start({ ...application, accounts: CTIDS.map((ctid, i) => ({ ctid, ...tokens[i]! })) });
    setup = connectorSetup('integration', application, linkedAccounts(fixture.accounts, CTIDS, tokens));
    connector = await startConnectorProcess({
      setup,
      accountIds: fixture.accounts.map((a) => a.id),
      demoUrl: double.url,
      ingressUrl: stack.ingress.url,
      label: 'integration',
    });
  }, 120_000);

  afterAll(async () => {
    await connector?.stop();
    await double?.close();
    await stack?.stop();
  });

  const submit = async (accountIndex: number, body: Record<string, unknown>) => {
    const res = await post(`${stack.ingress.url}/webhook/custom/${fixture.accounts[accountIndex]!.id}`, { secret: fixture.secret, ...body });
    expect(res.status).toBe(202);
    return res.body.signalId as string;
  };
  const outcomeOf = async (signalId: string) => (await pollUntilReported(stack.ingress.url, signalId, fixture.token, 1, 20_000)).accounts[0];

  test("when the connector says hello, then the accounts take its version and the broker's symbols with the volume step in lots", async () => {
    const account = await stack.registry.getAccount(fixture.accounts[0]!.id);
    expect(account?.bridgeVersion).toBe('1.5.0');
    const rules = await stack.registry.volumeRules([{ accountId: fixture.accounts[0]!.id, symbols: ['XAUUSD'] }]);
    expect(rules).toEqual([{ step: 0.01, min: 0.01, max: 50 }]);
    expect(double.connections).toBe(1);
  });

  test('when a buy is posted to a cTrader account, then the double gets one MARKET order in cents of units and the poll shows filled with the positionId as the ticket', async () => {
    const signalId = await submit(0, { action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 20 });
    const outcome = await outcomeOf(signalId);
    const positions = [...double.account(CTIDS[0]!).positions.values()];
    expect(positions).toHaveLength(1);
    expect(outcome).toMatchObject({ accountId: fixture.accounts[0]!.id, outcome: 'filled', ticket: String(positions[0]!.positionId) });
    const orders = double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ).filter((p) => p.ctidTraderAccountId === CTIDS[0]);
    expect(orders).toEqual([expect.objectContaining({ symbolId: 1, orderType: 1, tradeSide: 1, volume: 1_000_000, relativeStopLoss: 200 })]);
    expect(positions[0]).toMatchObject({ stopLoss: 1.0831 });
  });

  test('when the broker refuses, then the poll shows broker:<ErrorCode> <description>', async () => {
    const signalId = await submit(1, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.09 });
    expect(await outcomeOf(signalId)).toMatchObject({
      outcome: 'rejected',
      reason: expect.stringMatching(/^broker:TRADING_BAD_PRICES Invalid limit price 1\.09 /),
    });
  });

  test('when the Open API connection drops after the broker filled an order and before its answer, then after the reconnect the command is resolved from the broker by its label: one position, reported filled with its positionId', async () => {
    double.loseAnswerTo(PayloadType.PROTO_OA_NEW_ORDER_REQ);
    const before = double.connections;
    const signalId = await submit(1, { action: 'sell', symbol: 'USDJPY', volume: 0.2 });
    const outcome = await outcomeOf(signalId);
    const positions = [...double.account(CTIDS[1]!).positions.values()];
    expect(positions).toHaveLength(1);
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: String(positions[0]!.positionId) });
    expect(double.connections).toBeGreaterThan(before);
    expect(double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ).filter((p) => p.ctidTraderAccountId === CTIDS[1] && p.tradeSide === 2)).toHaveLength(1);
  });

  test('when an access token expires, then the connector refreshes it with ProtoOARefreshTokenReq, stores the new tokens encrypted, and the next signal fills', async () => {
    double.expireAccessToken(CTIDS[0]!);
    const signalId = await submit(0, { action: 'sell', symbol: 'EURUSD', volume: 0.05 });
    expect(await outcomeOf(signalId)).toMatchObject({ outcome: 'filled' });
    expect(double.requests(PayloadType.PROTO_OA_REFRESH_TOKEN_REQ)).toEqual([{ refreshToken: tokens[0]!.refreshToken }]);
    const fresh = double.currentTokens(CTIDS[0]!);
    const stored = setup.store.read().accounts.find((a) => a.ctidTraderAccountId === CTIDS[0])!;
    expect({ accessToken: stored.accessToken, refreshToken: stored.refreshToken }).toEqual(fresh);
    const onDisk = fs.readFileSync(setup.credentialsFile, 'utf8');
    for (const secret of [fresh.accessToken, fresh.refreshToken, application.clientSecret]) expect(onDisk).not.toContain(secret);
  });

  test('when the connector has run, then none of its output holds a token or the client secret, and the double saw no request outside the published definitions', async () => {
    const output = connector!.stdout() + connector!.stderr();
    const secrets = [
      application.clientSecret,
      ...tokens.flatMap((t) => [t.accessToken, t.refreshToken]),
      ...CTIDS.map((c) => double.currentTokens(c).accessToken),
      ...fixture.accounts.map((a) => a.bridgeToken),
    ];
    for (const s of secrets) expect(output).not.toContain(s);
    expect(double.violations).toEqual([]);
    expect(double.selfViolations).toEqual([]);
  });
});

/**
 * Sizing by risk, loss guards and the account's figures (docs/risk-sizing.md, protocol 1.2) on the connector: three
 * USD accounts of 100,000 on one connector process and one double, EURUSD at 1.08500/1.08510 to start with.
 */
describe('the cTrader connector sizes by risk, guards losses and sends the account figures', () => {
  let stack: Stack;
  let fixture: Fixture;
  let double: CtraderDouble;
  let setup: ConnectorSetup;
  let connector: ConnectorProcess | undefined;
  const ctids = [7_100_001, 7_100_002, 7_100_003];
  const grants = ctids.map(newGrant);
  const sized = { sizing: { mode: 'risk_percent', of: 'equity', percent: 1 } };
  const start = async () => {
    connector = await startConnectorProcess({
      setup,
      accountIds: fixture.accounts.map((a) => a.id),
      demoUrl: double.url,
      ingressUrl: stack.ingress.url,
      label: 'risk',
      env: { CTRADER_FIGURES_HEARTBEAT_MS: '1000' },
    });
  };

  beforeAll(async () => {
    ensureBuilt();
    stack = await startStack();
    fixture = await seedOwner(stack.registry, [
      { platform: 'ctrader', bridgeVersion: '1.0.0', risk: sized as never },
      { platform: 'ctrader', bridgeVersion: '1.0.0', risk: { lossGuards: { dailyLossAmount: 500, timezone: 'Europe/London' } } as never },
      { platform: 'ctrader', bridgeVersion: '1.0.0', risk: sized as never },
    ]);
    double = await CtraderDouble.start({ ...application, accounts: ctids.map((ctid, i) => ({ ctid, ...grants[i]! })) });
    setup = connectorSetup('risk', application, linkedAccounts(fixture.accounts, ctids, grants));
    await start();
  }, 120_000);

  afterAll(async () => {
    await connector?.stop();
    await double?.close();
    await stack?.stop();
    if (setup) fs.rmSync(setup.dir, { recursive: true, force: true });
  });

  const submit = async (i: number, body: Record<string, unknown>) => {
    const res = await post(`${stack.ingress.url}/webhook/custom/${fixture.accounts[i]!.id}`, { secret: fixture.secret, ...body });
    expect(res.status).toBe(202);
    return (await pollUntilReported(stack.ingress.url, res.body.signalId as string, fixture.token, 1, 20_000)).accounts[0];
  };
  const newOrders = (i: number) => double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ).filter((p) => p.ctidTraderAccountId === ctids[i]);

  test('when an account risks 1 % of equity and a buy carries a 20-pip stop, then the connector places 5 lots, whatever volume the signal named', async () => {
    // 1 % of 100,000 USD = 1,000 USD. EURUSD: a tick (0.00001) of a lot (100,000 EUR) is 1 USD, the quote currency
    // being the account's; the stop is 20 pips = 0.0020 = 200 ticks, so a lot loses 200 USD; 1,000 / 200 = 5.00 lots,
    // 500,000 EUR = 50,000,000 cents of units on the wire.
    expect(await submit(0, { action: 'buy', symbol: 'EURUSD', volume: 0.3, slPips: 20 })).toMatchObject({ outcome: 'filled' });
    expect(newOrders(0)).toEqual([expect.objectContaining({ symbolId: 1, orderType: 1, volume: 50_000_000, relativeStopLoss: 200 })]);
    expect([...double.account(ctids[0]!).positions.values()].map((p) => p.tradeData.volume)).toEqual([50_000_000]);
    const line = connector!.commands().find((l) => l.accountId === fixture.accounts[0]!.id && l.status === 'filled');
    expect(line?.message).toMatch(/^sized 5 lots by risk: 1% of equity = 1000\.00 USD/);
  });

  test("when a report goes, then it carries the account's figures: equity = balance + the position's unrealized P&L, margin its usedMargin", async () => {
    const figures = new RedisFigures(stack.redis);
    // 5 lots bought at the ask 1.08510 and valued at the bid 1.08500: 0.0001 × 500,000 = 50 USD down; margin at 1:100
    // is 500,000 × 1.0851 / 100 = 5,425.50 USD.
    const latest = await waitFor(
      'the figures after the fill',
      async () => {
        const f = await figures.latest(fixture.accounts[0]!.id);
        return f && f.figures.equity < 100_000 ? f : undefined;
      },
      15_000,
    );
    expect(latest.figures).toEqual({ balance: 100_000, equity: 99_950, margin: 5_425.5, freeMargin: 94_524.5, currency: 'USD' });
  });

  test("when equity is down the daily limit from the day's opening, then entries are refused risk_daily_loss_limit, also after the connector restarts; exits still run", async () => {
    expect(await submit(1, { action: 'buy', symbol: 'EURUSD', volume: 1 })).toMatchObject({ outcome: 'filled' });
    // The day opened at 100,000 (read before that buy). 1 lot bought at 1.08510, now worth the bid 1.08000:
    // 0.0051 × 100,000 = 510 USD down, at least the 500 USD limit.
    double.setQuote('EURUSD', 1.08, 1.0801);
    expect(await submit(1, { action: 'buy', symbol: 'EURUSD', volume: 0.1 })).toMatchObject({ outcome: 'rejected', reason: 'risk_daily_loss_limit' });
    const marksFile = path.join(setup.stateDir, `${fixture.accounts[1]!.id}.marks.json`);
    expect(JSON.parse(fs.readFileSync(marksFile, 'utf8'))).toMatchObject({ dayOpen: 100_000 });
    // A restart that forgot the opening would start the day at 99,490 and let the entry through.
    await connector!.stop();
    await start();
    expect(await submit(1, { action: 'sell', symbol: 'EURUSD', volume: 0.1 })).toMatchObject({ outcome: 'rejected', reason: 'risk_daily_loss_limit' });
    expect(newOrders(1)).toHaveLength(1);
    // An exit still runs (the poll does not show exits: the broker side does).
    const close = await post(`${stack.ingress.url}/webhook/custom/${fixture.accounts[1]!.id}`, {
      secret: fixture.secret,
      action: 'close_all',
      idempotencyKey: `close-${randomBytes(6).toString('hex')}`,
    });
    expect(close.status).toBe(202);
    await waitFor('close_all to empty the account', async () => double.account(ctids[1]!).positions.size === 0, 20_000);
    double.setQuote('EURUSD', 1.085, 1.0851);
  });

  test('when Open API does not give the figures at execution, then a sized entry is refused risk_figures_unavailable and nothing is placed', async () => {
    double.failRequests(PayloadType.PROTO_OA_GET_POSITION_UNREALIZED_PNL_REQ);
    try {
      expect(await submit(2, { action: 'buy', symbol: 'EURUSD', volume: 1, slPips: 20 })).toMatchObject({
        outcome: 'rejected',
        reason: 'risk_figures_unavailable',
      });
    } finally {
      double.stopFailing(PayloadType.PROTO_OA_GET_POSITION_UNREALIZED_PNL_REQ);
    }
    expect(newOrders(2)).toEqual([]);
    expect(await submit(2, { action: 'buy', symbol: 'EURUSD', volume: 1, slPips: 20 })).toMatchObject({ outcome: 'filled' });
    expect(newOrders(2)).toEqual([expect.objectContaining({ volume: 50_000_000 })]);
  });

  test('when there is nothing to report, then a heartbeat brings the figures as they are now', async () => {
    const figures = new RedisFigures(stack.redis);
    double.account(ctids[2]!).balance += 1_234_500; // a deposit of 12,345 USD
    const latest = await waitFor(
      'a heartbeat with the new balance',
      async () => {
        const f = await figures.latest(fixture.accounts[2]!.id);
        return f && f.figures.balance > 100_000 ? f : undefined;
      },
      20_000,
    );
    expect(latest.figures).toMatchObject({ balance: 112_345, currency: 'USD' });
    expect(double.violations).toEqual([]);
    expect(double.selfViolations).toEqual([]);
    // The heartbeat goes only after a long-poll (CTRADER_WAIT_MS 5 000) came back empty: jest's default 5 s cannot
    // hold one whole poll, so the test gets its own waitFor's 20 s and a margin.
  }, 30_000);
});

/** One cTrader account on its own stack, double and connector, for the tests of the Open API request limit. */
describe('the cTrader connector and the Open API request limit', () => {
  const running: { stack: Stack; double: CtraderDouble; connector?: ConnectorProcess }[] = [];

  afterAll(async () => {
    for (const r of running) {
      await r.connector?.stop();
      await r.double.close();
      await r.stack.stop();
    }
  });

  async function oneAccount(
    label: string,
    ctid: number,
    double: Partial<Parameters<typeof CtraderDouble.start>[0]>,
    readyTimeoutMs = 30_000,
    whileStarting?: (proc: ServiceProcess, stack: Stack) => void,
  ) {
    ensureBuilt();
    const stack = await startStack();
    const fixture = await seedOwner(stack.registry, [{ platform: 'ctrader', bridgeVersion: '1.0.0' }]);
    const tokens = newGrant();
    const d = await CtraderDouble.start({ ...application, accounts: [{ ctid, ...tokens }], ...double });
    const run: { stack: Stack; double: CtraderDouble; connector?: ConnectorProcess } = { stack, double: d };
    running.push(run);
    const accountId = fixture.accounts[0]!.id;
    const setup = connectorSetup(label, application, [
      { accountId, ctidTraderAccountId: ctid, environment: 'demo', bridgeToken: fixture.accounts[0]!.bridgeToken, ...tokens },
    ]);
    const started = Date.now();
    const starting = whileStarting && ((proc: ServiceProcess) => whileStarting(proc, stack));
    const opts = { setup, accountIds: [accountId], demoUrl: d.url, ingressUrl: stack.ingress.url, label, readyTimeoutMs, whileStarting: starting };
    run.connector = await startConnectorProcess(opts);
    const rulesOf = async (symbol: string) => (await stack.registry.volumeRules([{ accountId, symbols: [symbol] }]))[0];
    return { double: d, connector: run.connector, startedMs: Date.now() - started, rulesOf, stack, fixture };
  }

  test("when an account lists 12 000 symbols (60 ProtoOASymbolByIdReq at hello), then at most 50 requests go out in any second, and hello carries as many as fit the ingress's 256 KB", async () => {
    const base = DEFAULT_SYMBOLS[0]!;
    const symbols: DoubleSymbol[] = Array.from({ length: 12_000 }, (_, i) => ({ ...base, symbolId: 100 + i, symbolName: `SYM${i}` }));
    const { double, connector, startedMs, rulesOf } = await oneAccount('rate', 99, { symbols }, 60_000);
    expect(double.requests(PayloadType.PROTO_OA_SYMBOL_BY_ID_REQ)).toHaveLength(60);
    expect(double.maxPerSecond).toBeLessThanOrEqual(50);
    expect(double.maxPerSecond).toBeGreaterThanOrEqual(45);
    expect(startedMs).toBeGreaterThan(1_000);
    const truncated = connector.jsonLines('stderr').find((l) => l.event === 'symbols_truncated')!;
    expect(truncated).toMatchObject({ listed: 12_000, sent: expect.any(Number) });
    expect(truncated.sent as number).toBeGreaterThan(2_000);
    expect(await rulesOf(truncated.lastSent as string)).toEqual({ step: 0.01, min: 0.01, max: 100 });
    expect(await rulesOf(`SYM${truncated.sent as number}`)).toBeUndefined();
  }, 90_000);

  test('when the proxy answers BLOCKED_PAYLOAD_TYPE with retryAfter, then the connector waits and sends the request again, and hello still succeeds', async () => {
    // A proxy allowing 3 requests per second: app auth, account auth and the symbol list pass, the next is blocked.
    const { double, connector, rulesOf } = await oneAccount('throttled', 98, { limitPerSecond: 3 });
    expect(double.blocked).toBeGreaterThan(0);
    expect(connector.jsonLines('stderr').filter((l) => l.event === 'connection_error')).toEqual([]);
    expect(await rulesOf('EURUSD')).toEqual({ step: 0.01, min: 0.01, max: 100 });
  }, 60_000);

  test('when the ingress answers 429 to the session hello, then the connector waits the Retry-After, says hello and the next signal fills', async () => {
    let ready = false; // (ready needs the connector's hello: the holding cannot go on forever)
    const spend = (proc: ServiceProcess, stack: Stack) =>
      void holdHelloBudget(stack, () => ready || proc.jsonLines('stderr').some((l) => l.event === 'rate_limited'));
    const { connector, stack, fixture } = await oneAccount('budget', 97, {}, 30_000, spend).finally(() => (ready = true));
    const buy = { secret: fixture.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 };
    const res = await post(`${stack.ingress.url}/webhook/custom/${fixture.accounts[0]!.id}`, buy);
    expect(res.status).toBe(202);
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId as string, fixture.token, 1, 30_000);
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled' });
    const limited = connector.jsonLines('stderr').filter((l) => l.event === 'rate_limited');
    // Once: after its wait the next hello came in a fresh budget (without the wait it is refused again in this one).
    expect(limited.map((l) => l.path)).toEqual(['/bridge/v1/session/hello']);
    expect(limited[0]!.retryInMs as number).toBeGreaterThanOrEqual(1000);
  }, 60_000);
});

describe("the cTrader connector's credentials verbs (built program)", () => {
  test('when an operator puts credentials on standard input and lists them, then the file is encrypted and the listing shows ids but no secret', () => {
    ensureBuilt();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-cli-'));
    try {
      const env = {
        PATH: process.env.PATH ?? '',
        CTRADER_CREDENTIALS_KEY: randomBytes(32).toString('base64'),
        CTRADER_CREDENTIALS_FILE: path.join(dir, 'c.enc'),
      };
      const secrets = {
        clientSecret: `cs_${randomBytes(12).toString('hex')}`,
        accessToken: `at_${randomBytes(12).toString('hex')}`,
        refreshToken: `rt_${randomBytes(12).toString('hex')}`,
        bridgeToken: `brg_${randomBytes(16).toString('hex')}`,
      };
      const doc = {
        application: { clientId: 'cid-1', clientSecret: secrets.clientSecret },
        accounts: [
          {
            accountId: 'acc-cli',
            ctidTraderAccountId: 321,
            environment: 'live',
            bridgeToken: secrets.bridgeToken,
            accessToken: secrets.accessToken,
            refreshToken: secrets.refreshToken,
          },
        ],
      };
      const run = (args: string[], input?: string) =>
        spawnSync(process.execPath, [ENTRIES['ctrader-connector'], ...args], { env, input, encoding: 'utf8', timeout: 20_000 });
      const put = run(['credentials', 'put'], JSON.stringify(doc));
      expect({ status: put.status, out: JSON.parse(put.stdout) }).toEqual({ status: 0, out: { application: true, accounts: ['acc-cli'] } });
      const list = run(['credentials', 'list']);
      expect(list.status).toBe(0);
      expect(JSON.parse(list.stdout)).toEqual({
        application: { clientId: 'cid-1' },
        accounts: [{ accountId: 'acc-cli', ctidTraderAccountId: 321, environment: 'live', accessTokenExpiresAt: null }],
      });
      const everything = put.stdout + put.stderr + list.stdout + list.stderr + fs.readFileSync(env.CTRADER_CREDENTIALS_FILE, 'utf8');
      for (const s of Object.values(secrets)) expect(everything).not.toContain(s);
      const bad = run(['credentials', 'put'], `{"accounts": [{"accessToken": "${secrets.accessToken}"`);
      expect(bad.status).toBe(2);
      expect(bad.stderr).not.toContain(secrets.accessToken);
      const noKey = spawnSync(process.execPath, [ENTRIES['ctrader-connector'], 'credentials', 'list'], {
        env: { ...env, CTRADER_CREDENTIALS_KEY: '' },
        encoding: 'utf8',
      });
      expect(noKey.status).toBe(2);
      expect(noKey.stderr).toMatch(/CTRADER_CREDENTIALS_KEY/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
