import { get, pollUntilReported, post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { waitFor } from '../../support/infra';

describe('Prometheus metrics', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('when signals run, then the ingress and the worker count them, with no secret, token or id in any label', async () => {
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const rejected = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, {
      secret: f.secret,
      action: 'sell',
      symbol: 'EURUSD',
      volume: 0.1,
    });
    const commands = await terminal.nextCommands(2);
    await terminal.report([
      { commandId: commands[0]!.commandId, status: 'filled', ticket: '1' },
      { commandId: commands[1]!.commandId, status: 'rejected', retcode: 10016, message: 'Invalid stops' },
    ]);
    for (const id of [res.body.signalId, rejected.body.signalId]) await pollUntilReported(stack.ingress.url, id, f.token);

    const ingress = await get(`${stack.ingress.adminUrl}/metrics`);
    expect(ingress.status).toBe(200);
    expect(ingress.text).toMatch(/external_signals_http_requests_total\{route="\/webhook\/custom\/:accountId",method="POST",status="202"\} [1-9]/);
    expect(ingress.text).toMatch(/external_signals_accept_seconds_count\{url="account",status="202"\} [1-9]/);
    expect(ingress.text).toMatch(/external_signals_bridges_online [1-9]/);

    const worker = await waitFor(
      'the worker to count both outcomes',
      async () => {
        const text = await (await fetch(stack.worker!.metricsUrl!)).text();
        return /outcome="rejected",reason="broker"/.test(text) && /outcome="filled",reason="none"/.test(text) ? text : undefined;
      },
      10_000,
    );
    expect(worker).toMatch(/external_signals_outcomes_total\{outcome="filled",reason="none",action="buy",platform="mt5"\} 1/);

    for (const text of [ingress.text, worker]) {
      for (const needle of [f.secret, f.token, f.accounts[0]!.bridgeToken, f.accounts[0]!.id, res.body.signalId, 'Invalid stops']) {
        expect(text).not.toContain(needle);
      }
    }
  });
});
