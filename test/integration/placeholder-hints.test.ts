import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * A TradingView template sent with a placeholder left in, or with TradingView's exchange prefix, gets the 400 of the
 * spec (error, details with path and message) whose message names the likely cause, as JSON and as a one-line alert.
 */
describe('a refused symbol or id says what it most likely is', () => {
  let stack: Stack;
  let f: Fixture;
  const url = () => `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const SYMBOL_RULE = 'must be 1 to 32 letters, digits or ._#-/';
  const ID_RULE = 'must be 1 to 64 letters, digits or ._:-';

  test.each([
    [
      'an unfilled {{ticker}}',
      { action: 'buy', symbol: '{{ticker}}', volume: 0.1 },
      'symbol',
      `${SYMBOL_RULE}; {{ticker}} is a TradingView placeholder left unfilled: TradingView fills it only in an alert's message, so write the value or put the template in the alert's message box`,
    ],
    [
      'an exchange prefix',
      { action: 'buy', symbol: 'FX:EURUSD', volume: 0.1 },
      'symbol',
      `${SYMBOL_RULE}; FX:EURUSD carries an exchange prefix (FX:): send the symbol alone, EURUSD (TradingView's {{ticker}}, not {{exchange}}:{{ticker}})`,
    ],
    [
      'a <POSITION_TICKET> left in',
      { action: 'close', positionId: '<POSITION_TICKET>' },
      'positionId',
      `${ID_RULE}; <POSITION_TICKET> is a template's placeholder: replace it, brackets included, with the value`,
    ],
    ['a symbol with a space (no likely cause to name)', { action: 'buy', symbol: 'EUR USD', volume: 0.1 }, 'symbol', SYMBOL_RULE],
  ])('when the JSON body holds %s, then 400 names it', async (_name, signal, path, message) => {
    const res = await post(url(), { secret: f.secret, ...signal });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: `Invalid signal: ${path}: ${message}`, details: [{ path, message }] });
  });

  test('when a one-line alert holds an exchange prefix, then the same 400', async () => {
    const res = await post(url(), `${f.secret},buy,OANDA:XAUUSD,volume=0.1`, { 'content-type': 'text/plain; charset=utf-8' });
    expect(res.status).toBe(400);
    const message = `${SYMBOL_RULE}; OANDA:XAUUSD carries an exchange prefix (OANDA:): send the symbol alone, XAUUSD (TradingView's {{ticker}}, not {{exchange}}:{{ticker}})`;
    expect(res.body).toEqual({ error: `Invalid signal: symbol: ${message}`, details: [{ path: 'symbol', message }] });
  });
});
