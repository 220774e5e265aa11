import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pino from 'pino';
import type { Request, Response } from 'express';
import { buildOpenApiDocument } from '../../src/http/openapi';
import { errorHandler, sendRefusal, type Channel } from '../../src/http/errors';
import { ACTIONS } from '../../src/domain/actions';
import type { SignalAccepted, SignalNoTargets } from '../../src/signals/acceptance';
import { Refusal, routeLimited } from '../../src/refusal';
import { externalSignalShape, validateSignal } from '../../src/domain/signal';
import type { SignalStatus } from '../../src/signals/status';
import { SPEC_ACTIONS } from '../helpers/spec-actions';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const VALIDATOR = '@seriousme/openapi-schema-validator';

// The contract's own lists (spec §2.1, §4.1–§4.3), written out here so the document is checked against the spec.
const SPEC_SUBMIT_STATUSES = ['200', '202', '400', '401', '403', '409', '412', '413', '429', '500', '503'];
const SPEC_POLL_STATUSES = ['200', '401', '403', '429', '500'];

const SPEC_SIGNAL_FIELDS = [
  'secret',
  'action',
  'symbol',
  'volume',
  'price',
  'stopLimitPrice',
  'sl',
  'tp',
  'slPips',
  'tpPips',
  'positionId',
  'orderId',
  'partialVolume',
  'expiry',
  'side',
  'pnl',
  'meta',
];

const SUBMIT_OPS = [
  ['/webhook/custom', 'post'],
  ['/webhook/custom/{accountId}', 'post'],
] as const;
const POLL_OP = ['/v1/signals/{signalId}', 'get'] as const;

type Json = any; // the document is plain JSON; the tests walk it freely

interface SchemaCheck {
  /** JSON pointer into the document, e.g. /components/schemas/ExternalSignal. */
  pointer: string;
  data: unknown;
}

interface ValidatorRun {
  version: string;
  result: { valid: boolean; errors?: unknown };
  checks: { valid: boolean; errors: unknown }[];
}

/**
 * The validator is ESM-only and jest's module system cannot require it here, so it runs in a plain node process:
 * it validates the document, then evaluates instances against schemas in it with the JSON Schema 2020-12 engine
 * (Ajv) the validator itself is built on.
 */
function runValidator(document: unknown, checks: SchemaCheck[]): ValidatorRun {
  const script = `
    import { createRequire } from 'node:module';
    import { Validator } from '${VALIDATOR}';
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    const { document, checks } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    const require = createRequire(import.meta.resolve('${VALIDATOR}'));
    const Ajv2020 = require('ajv/dist/2020').default;
    const addFormats = require('ajv-formats').default;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...document, $id: 'https://external-signals.invalid/openapi.json' });
    const out = checks.map(({ pointer, data }) => {
      const validate = ajv.getSchema('https://external-signals.invalid/openapi.json#' + pointer);
      if (!validate) return { valid: false, errors: 'no schema at ' + pointer };
      const valid = validate(data);
      return { valid, errors: validate.errors ?? null };
    });
    process.stdout.write(JSON.stringify({ version: validator.version, result, checks: out }));
  `;
  const stdout = execFileSync(process.execPath, ['--input-type=module', '--eval', script], {
    cwd: REPO_ROOT,
    input: JSON.stringify({ document, checks }),
    encoding: 'utf8',
  });
  return JSON.parse(stdout) as ValidatorRun;
}

const pointerSegment = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const responsePointer = (p: string, method: string, status: string) =>
  `/paths/${pointerSegment(p)}/${method}/responses/${status}/content/application~1json/schema`;

// ExternalSignal samples: the document's conditions must give the verdict the ingress gives (validateSignal).
const FUTURE = '2099-01-01T00:00:00Z';
const S = { secret: 'whsec_test' };
const SIGNALS: [string, Record<string, unknown>, boolean][] = [
  ['buy', { ...S, action: 'buy', symbol: 'EURUSD', volume: 0.1 }, true],
  ['buy with sl/tp', { ...S, action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: 1.07, tp: 1.1 }, true],
  ['sell with slPips/tpPips and meta', { ...S, action: 'sell', symbol: 'EURUSD', volume: 100, slPips: 20, tpPips: 40, meta: { origin: 'tv', x: 1 } }, true],
  ['buy_limit', { ...S, action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 }, true],
  ['sell_stop_limit', { ...S, action: 'sell_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.08, stopLimitPrice: 1.079 }, true],
  ['close by positionId', { ...S, action: 'close', positionId: 'p-1' }, true],
  ['filtered close by symbol', { ...S, action: 'close', symbol: 'EURUSD' }, true],
  ['filtered close by side and pnl', { ...S, action: 'close', side: 'buy', pnl: 'loss' }, true],
  ['close_all', { ...S, action: 'close_all' }, true],
  ['partial_close', { ...S, action: 'partial_close', positionId: 'p-1', partialVolume: 0.05 }, true],
  ['cancel_pending', { ...S, action: 'cancel_pending', orderId: 'o-1' }, true],
  ['modify_sl', { ...S, action: 'modify_sl', positionId: 'p-1', sl: 1.07 }, true],
  ['modify_tp', { ...S, action: 'modify_tp', positionId: 'p-1', tp: 1.1 }, true],
  ['modify_pending with a price', { ...S, action: 'modify_pending', orderId: 'o-1', price: 1.09 }, true],
  ['modify_pending with an expiry', { ...S, action: 'modify_pending', orderId: 'o-1', expiry: FUTURE }, true],
  ['modify_pending_expiry', { ...S, action: 'modify_pending_expiry', orderId: 'o-1', expiry: FUTURE }, true],
  ['breakeven', { ...S, action: 'breakeven', positionId: 'p-1' }, true],
  ['buy without volume', { ...S, action: 'buy', symbol: 'EURUSD' }, false],
  ['buy with volume 0', { ...S, action: 'buy', symbol: 'EURUSD', volume: 0 }, false],
  ['buy with volume 100.01', { ...S, action: 'buy', symbol: 'EURUSD', volume: 100.01 }, false],
  ['buy with a string volume', { ...S, action: 'buy', symbol: 'EURUSD', volume: '1.5' }, false],
  ['buy with a positionId', { ...S, action: 'buy', symbol: 'EURUSD', volume: 1, positionId: 'p-1' }, false],
  ['buy with sl and slPips', { ...S, action: 'buy', symbol: 'EURUSD', volume: 1, sl: 1.07, slPips: 20 }, false],
  ['buy with tp and tpPips', { ...S, action: 'buy', symbol: 'EURUSD', volume: 1, tp: 1.1, tpPips: 20 }, false],
  ['buy_limit without price', { ...S, action: 'buy_limit', symbol: 'EURUSD', volume: 1 }, false],
  ['buy_stop_limit without stopLimitPrice', { ...S, action: 'buy_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.08 }, false],
  ['close with nothing', { ...S, action: 'close' }, false],
  ['close with a positionId and a filter', { ...S, action: 'close', positionId: 'p-1', symbol: 'EURUSD' }, false],
  ['close_all with a symbol', { ...S, action: 'close_all', symbol: 'EURUSD' }, false],
  ['modify_pending with nothing to modify', { ...S, action: 'modify_pending', orderId: 'o-1' }, false],
  ['modify_sl without sl', { ...S, action: 'modify_sl', positionId: 'p-1' }, false],
  ['an unknown field', { ...S, action: 'buy', symbol: 'EURUSD', volume: 1, lots: 1 }, false],
  ['an unknown action', { ...S, action: 'hold' }, false],
  ['no secret', { action: 'close_all' }, false],
];

// Bodies the code actually sends, each with the operation and status it is sent on.
class CapturingResponse {
  statusCode = 200;
  body: unknown;
  headersSent = false;
  locals: Record<string, unknown> = { correlationId: 'req_test' };
  headers: Record<string, string> = {};
  status(code: number) {
    this.statusCode = code;
    return this;
  }
  json(body: unknown) {
    this.body = body;
    return this;
  }
  setHeader(name: string, value: string) {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  getHeader(name: string) {
    return this.headers[name.toLowerCase()];
  }
}

function refusalBody(refusal: Refusal, channel: Channel) {
  const res = new CapturingResponse();
  sendRefusal(res as unknown as Response, refusal, channel, 'req_test');
  return { status: String(res.statusCode), body: res.body };
}

function handledBody(err: unknown, channel: Channel) {
  const res = new CapturingResponse();
  const handle = errorHandler(pino({ level: 'silent' }), 5, () => channel);
  handle(err, {} as Request, res as unknown as Response, () => undefined);
  return { status: String(res.statusCode), body: res.body };
}

const accepted: SignalAccepted = { success: true, signalId: 'sig_0123456789abcdef0123', correlationId: 'req_test', accountsResolved: 2 };
const noTargets: SignalNoTargets = { success: false, accountsResolved: 0, correlationId: 'req_test' };
const pending: SignalStatus = { signalId: 'sig_0123456789abcdef0123', status: 'pending_or_unknown', reported: 0, accounts: [] };
const reported: SignalStatus = {
  signalId: 'sig_0123456789abcdef0123',
  status: 'reported',
  reported: 4,
  accounts: [
    { accountId: 'acc-1', outcome: 'filled', ticket: '123', reason: null, occurredAt: '2024-06-12T12:00:00.000Z' },
    { accountId: 'acc-2', outcome: 'rejected', ticket: null, reason: 'risk_max_lots', occurredAt: '2024-06-12T12:00:01.000Z' },
    // The additive fields (docs/poll.md) beside the spec's.
    {
      accountId: 'acc-3',
      outcome: 'filled',
      ticket: '124',
      reason: null,
      occurredAt: '2024-06-12T12:00:02.000Z',
      entry: 'position',
      fill: { price: 1.0801, volume: 1.76 },
    },
    { accountId: 'acc-4', outcome: 'filled', ticket: '125', reason: null, occurredAt: '2024-06-12T12:00:03.000Z', entry: 'order' },
  ],
};
const limits = { limit: 10, windowMs: 60_000 };

const SENT: [string, { status: string; body: unknown }][] = [
  ['202 accepted', { status: '202', body: accepted }],
  ['503 partial acceptance', { status: '503', body: { ...accepted, success: false } }],
  ['200 no targets', { status: '200', body: noTargets }],
  ['400 invalid', refusalBody(new Refusal('invalid', 'Invalid signal: volume: too big', { details: [{ path: 'volume', message: 'too big' }] }), 'ingestion')],
  ['401 unauthorized', refusalBody(new Refusal('unauthorized', 'Missing or invalid webhook secret'), 'ingestion')],
  ['403 forbidden', refusalBody(new Refusal('forbidden', 'Account is locked'), 'ingestion')],
  ['409 not accepted by the account', refusalBody(new Refusal('not_accepted_by_account', 'Copy-only master account'), 'ingestion')],
  ['412 bridge too old', refusalBody(new Refusal('bridge_too_old', 'Update the EA'), 'ingestion')],
  ['413 body too large', handledBody({ type: 'entity.too.large' }, 'ingestion')],
  ['429 fairness throttle', refusalBody(new Refusal('throttled', 'Too many signals', { scope: 'account_write', ...limits }), 'ingestion')],
  ['429 route limiter', refusalBody(routeLimited(limits.limit, limits.windowMs, 7), 'ingestion')],
  ['500 unexpected', handledBody(new Error('boom'), 'ingestion')],
  ['503 backpressure', refusalBody(new Refusal('backpressure', 'System under high load, retry later'), 'ingestion')],
  ['503 store failing closed', refusalBody(new Refusal('store_unavailable', 'service_unavailable', { retryAfterSeconds: 5 }), 'ingestion')],
];
const SENT_ON_POLL: [string, { status: string; body: unknown }][] = [
  ['200 pending', { status: '200', body: pending }],
  ['200 reported', { status: '200', body: reported }],
  ['401 unauthorized', refusalBody(new Refusal('unauthorized', 'Missing or invalid API token'), 'poll')],
  ['403 token suspended', refusalBody(new Refusal('token_suspended', 'token_suspended', { suspendedUntil: '2099-01-01T00:00:00.000Z' }), 'poll')],
  ['429 account read cap', refusalBody(new Refusal('throttled', 'Too many status reads', { scope: 'account_read', ...limits }), 'poll')],
  [
    '429 per-address cap',
    refusalBody(new Refusal('throttled', 'Too many requests from this address; slow down and retry later', { scope: 'ip', ...limits }), 'poll'),
  ],
  ['500 unexpected', handledBody(new Error('boom'), 'poll')],
];

describe('OpenAPI document', () => {
  const doc: Json = buildOpenApiDocument();
  const externalSignal: Json = doc.components.schemas.ExternalSignal;
  let run: ValidatorRun;
  const checks: SchemaCheck[] = [
    ...SIGNALS.map(([, data]) => ({ pointer: '/components/schemas/ExternalSignal', data })),
    ...SUBMIT_OPS.flatMap(([p, m]) => SENT.map(([, sent]) => ({ pointer: responsePointer(p, m, sent.status), data: sent.body }))),
    ...SENT_ON_POLL.map(([, sent]) => ({ pointer: responsePointer(POLL_OP[0], POLL_OP[1], sent.status), data: sent.body })),
  ];

  beforeAll(() => {
    run = runValidator(doc, checks);
  });

  test(`when the document is validated with ${VALIDATOR}, then it is a valid OpenAPI 3.1 document`, () => {
    expect(run.result).toEqual({ valid: true });
    expect(run.version).toBe('3.1');
    expect(doc.openapi).toBe('3.1.0');
  });

  test('when the info is read, then the title is External Signals API and the version is 1.0.0 (spec §9.6)', () => {
    expect(doc.info.title).toBe('External Signals API');
    expect(doc.info.version).toBe('1.0.0');
  });

  test('when the document is built twice, then it is built once and shared, frozen', () => {
    expect(buildOpenApiDocument()).toBe(doc);
    expect(Object.isFrozen(doc.components.schemas.ExternalSignal)).toBe(true);
  });

  test.each(SUBMIT_OPS)('when %s %s is read, then it has exactly the status codes of spec §4.1', (p, m) => {
    expect(Object.keys(doc.paths[p][m].responses).sort()).toEqual([...SPEC_SUBMIT_STATUSES].sort());
  });

  test('when the status poll is read, then it has exactly the status codes of spec §4.3', () => {
    expect(Object.keys(doc.paths[POLL_OP[0]][POLL_OP[1]].responses).sort()).toEqual([...SPEC_POLL_STATUSES].sort());
  });

  test.each(SUBMIT_OPS)('when %s %s is read, then it takes an ExternalSignal as JSON or text/plain and an X-Idempotency-Key of at most 128', (p, m) => {
    const op = doc.paths[p][m];
    expect(Object.keys(op.requestBody.content).sort()).toEqual(['application/json', 'text/plain']);
    for (const media of Object.values<Json>(op.requestBody.content)) expect(media.schema).toEqual({ $ref: '#/components/schemas/ExternalSignal' });
    const key = op.parameters.find((x: Json) => x.name === 'X-Idempotency-Key');
    expect(key).toMatchObject({ in: 'header', required: false, schema: { type: 'string', maxLength: 128 } });
    expect(op.security).toEqual([]);
    expect(op.description).toMatch(/secret/);
    expect(op.responses['503'].content['application/json'].schema).toEqual({
      oneOf: [{ $ref: '#/components/schemas/SignalAccepted' }, { $ref: '#/components/schemas/ServiceUnavailable' }],
    });
    for (const header of ['X-Request-ID', 'Idempotent-Replayed', 'RateLimit']) expect(op.responses['202'].headers[header]).toBeDefined();
    expect(op.responses['503'].headers['Retry-After']).toBeDefined();
    expect(op.responses['429'].headers['Retry-After']).toBeDefined();
  });

  test('when the status poll is read, then it needs a bearer token and answers 403 with TokenSuspended', () => {
    const op = doc.paths[POLL_OP[0]][POLL_OP[1]];
    expect(op.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(op.responses['403'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TokenSuspended' });
    expect(op.parameters).toEqual([expect.objectContaining({ name: 'signalId', in: 'path', required: true })]);
  });

  test("when ExternalSignal is read, then it is closed and has exactly the fields of externalSignalShape, which include the spec's", () => {
    expect(externalSignal.additionalProperties).toBe(false);
    expect(externalSignal.required).toEqual(['secret', 'action']);
    const names = Object.keys(externalSignal.properties);
    expect([...names].sort()).toEqual(Object.keys(externalSignalShape.shape).sort());
    expect(names).toEqual(expect.arrayContaining(SPEC_SIGNAL_FIELDS));
  });

  test('when ExternalSignal is read, then action lists all 17 actions', () => {
    expect(externalSignal.properties.action.enum).toEqual([...ACTIONS]);
    expect([...externalSignal.properties.action.enum].sort()).toEqual([...SPEC_ACTIONS].sort());
    expect(externalSignal.properties.action.enum).toHaveLength(17);
  });

  test('when ExternalSignal is read, then volume is greater than 0 (exclusive) and at most 100', () => {
    expect(externalSignal.properties.volume).toMatchObject({ type: 'number', exclusiveMinimum: 0, maximum: 100 });
  });

  test.each(SIGNALS.map(([name, body, valid], i) => [name, body, valid, i] as const))(
    'when the signal is %s, then the document and the ingress agree',
    (_name, body, valid, i) => {
      const ingress = validateSignal(body);
      expect(ingress.ok).toBe(valid);
      expect({ valid: run.checks[i]!.valid, errors: run.checks[i]!.errors }).toEqual(expect.objectContaining({ valid }));
    },
  );

  describe.each(SUBMIT_OPS)('when %s %s answers', (p, m) => {
    test.each(SENT.map(([name, sent], i) => [name, sent, i] as const))('%s, then the body matches the documented schema', (_name, sent, i) => {
      const offset = SIGNALS.length + SUBMIT_OPS.findIndex(([q, n]) => q === p && n === m) * SENT.length;
      expect(SPEC_SUBMIT_STATUSES).toContain(sent.status);
      expect(run.checks[offset + i]).toEqual({ valid: true, errors: null });
    });
  });

  test.each(SENT_ON_POLL.map(([name, sent], i) => [name, sent, i] as const))(
    'when the status poll answers %s, then the body matches the documented schema',
    (_name, sent, i) => {
      const offset = SIGNALS.length + SUBMIT_OPS.length * SENT.length;
      expect(SPEC_POLL_STATUSES).toContain(sent.status);
      expect(run.checks[offset + i]).toEqual({ valid: true, errors: null });
    },
  );

  test('when a 503 body has no signalId, then it is ServiceUnavailable, and a partial acceptance is SignalAccepted', () => {
    const oneOf = runValidator(doc, [
      { pointer: '/components/schemas/SignalAccepted', data: { error: 'service_unavailable', retryAfterSeconds: 5 } },
      { pointer: '/components/schemas/ServiceUnavailable', data: { ...accepted, success: false } },
    ]);
    expect(oneOf.checks.map((c) => c.valid)).toEqual([false, false]);
  });
});
