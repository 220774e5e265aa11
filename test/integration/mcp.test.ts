import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ACTIONS } from '../../src/domain/actions';
import { REPO_ROOT } from '../../support/infra';
import { seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';

/**
 * The BUILT MCP server (`npm run mcp` = node dist/src/mcp/server.js) spoken to by the SDK's own client over stdio,
 * against the real stack; a scripted terminal fills the command. Run `npm run build` first (make test does).
 */
const SERVER = path.join(REPO_ROOT, 'dist', 'src', 'mcp', 'server.js');

type ToolResult = { content: { type: string; text?: string }[]; structuredContent?: Record<string, any>; isError?: boolean };

interface Session {
  client: Client;
  /** Everything the server said: tool listings, tool results and its stderr. */
  transcript: string[];
  close(): Promise<void>;
}

async function connect(env: Record<string, string>): Promise<Session> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER], env, stderr: 'pipe', cwd: REPO_ROOT });
  const transcript: string[] = [];
  transport.stderr?.on('data', (chunk: Buffer) => transcript.push(chunk.toString('utf8')));
  const client = new Client({ name: 'mcp-integration-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transcript, close: () => client.close() };
}

async function call(session: Session, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const result = (await session.client.callTool({ name, arguments: args })) as ToolResult;
  session.transcript.push(JSON.stringify(result));
  return result;
}

const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('\n');

describe('the MCP server (built, stdio) against the real stack', () => {
  let stack: Stack;
  let f: Fixture;
  let session: Session;

  beforeAll(async () => {
    if (!fs.existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`npm run build\` first`);
    stack = await startStack();
    f = await seedOwner(stack.registry);
    session = await connect({ SIGNALS_BASE_URL: stack.ingress.url, SIGNALS_WEBHOOK_SECRET: f.secret, SIGNALS_API_TOKEN: f.token });
  });
  afterAll(async () => {
    await session?.close();
    await stack?.stop();
  });

  test('when tools are listed, then submit_signal (17 actions, no secret) and get_signal_status are there with input schemas', async () => {
    const { tools } = await session.client.listTools();
    session.transcript.push(JSON.stringify(tools));
    expect(tools.map((t) => t.name).sort()).toEqual(['get_signal_status', 'submit_signal']);
    expect(session.client.getInstructions()).toMatch(/reads outcomes\. submit_signal answers at once/);

    const submit = tools.find((t) => t.name === 'submit_signal')!;
    const props = submit.inputSchema.properties as Record<string, any>;
    expect(submit.inputSchema.type).toBe('object');
    expect(props.action.enum).toEqual([...ACTIONS]);
    expect(props.action.enum).toHaveLength(17);
    expect(props.secret).toBeUndefined();
    expect(JSON.stringify(submit.inputSchema)).not.toMatch(/"secret"/);
    expect(submit.inputSchema.required).toEqual(['action']);
    expect(submit.inputSchema.additionalProperties).toBe(false);
    expect(props.volume).toMatchObject({ type: 'number', maximum: 100 });
    expect(Object.keys(props)).toEqual(expect.arrayContaining(['symbol', 'volume', 'price', 'positionId', 'orderId', 'meta', 'idempotencyKey', 'accountId']));
    expect(submit.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });

    const status = tools.find((t) => t.name === 'get_signal_status')!;
    expect(status.inputSchema.required).toEqual(['signalId']);
    expect(status.inputSchema.properties).toMatchObject({ signalId: { type: 'string' }, waitMs: { maximum: 30000 } });
    expect(status.annotations).toMatchObject({ readOnlyHint: true });
    // The limits are in the schema a host shows, not only in a bare -32602.
    expect((status.inputSchema.properties as Record<string, any>).signalId.description).toMatch(/"sig_" followed by 20 to 40 letters and digits/);

    // Both tools declare what their structuredContent holds.
    expect(submit.outputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['kind', 'idempotencyKey', 'attempts']) });
    expect((submit.outputSchema!.properties as Record<string, any>).kind.enum).toEqual(['accepted', 'partially_accepted', 'no_targets', 'refused', 'gave_up']);
    expect(status.outputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['signalId', 'status', 'accounts', 'complete', 'signalIdKnown']),
    });
  });

  test('when the signalId cannot exist, then the agent is told it is malformed, not to poll again', async () => {
    const res = await call(session, 'get_signal_status', { signalId: 'sig_not-a-real-id!' });
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toBeUndefined();
    expect(textOf(res)).toMatch(/is not a signalId the service issues/);
    expect(textOf(res)).not.toMatch(/poll again/i);
  });

  test('when a well-formed signalId this session never submitted stays pending, then the agent is told it may be mistyped', async () => {
    const res = await call(session, 'get_signal_status', { signalId: 'sig_0123456789abcdef0123456789abcdef' });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ status: 'pending_or_unknown', signalIdKnown: 'not_submitted_in_this_session' });
    expect(textOf(res)).toMatch(/did not submit this signalId.*typo/);
  });

  test('when an agent submits a buy and the terminal fills it, then submit_signal says accepted and get_signal_status says filled', async () => {
    const account = f.accounts[0]!;
    const terminal = new ScriptedTerminal(stack.ingress.url, account.bridgeToken);
    await terminal.hello();

    const submitted = await call(session, 'submit_signal', {
      action: 'buy',
      symbol: 'EURUSD',
      volume: 0.1,
      accountId: account.id,
      meta: { origin: 'mcp-test' },
    });
    expect(submitted.isError).toBeFalsy();
    expect(submitted.structuredContent).toMatchObject({ kind: 'accepted', signalId: expect.stringMatching(/^sig_/), accountsResolved: 1, replayed: false });
    const signalId = submitted.structuredContent!.signalId as string;
    expect(textOf(submitted)).toMatch(new RegExp(`^accepted: signalId ${signalId}`));
    expect(textOf(submitted)).toMatch(/get_signal_status/);

    const before = await call(session, 'get_signal_status', { signalId });
    expect(before.isError).toBeFalsy();
    expect(before.structuredContent).toMatchObject({
      signalId,
      status: 'pending_or_unknown',
      reported: 0,
      complete: false,
      signalIdKnown: 'submitted_in_this_session',
    });
    expect(textOf(before)).not.toMatch(/typo/);
    expect(textOf(before)).toMatch(/pending_or_unknown/);

    const [command] = await terminal.nextCommands(1);
    expect(command).toMatchObject({ signalId, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: '900777', price: 1.1 }]);

    const after = await call(session, 'get_signal_status', { signalId, waitMs: 15_000 });
    expect(after.isError).toBeFalsy();
    expect(after.structuredContent).toMatchObject({
      signalId,
      status: 'reported',
      reported: 1,
      complete: true,
      expectAccounts: 1,
      accounts: [{ accountId: account.id, outcome: 'filled', ticket: '900777' }],
    });
    expect(textOf(after)).toContain(`${account.id} filled (ticket 900777)`);
  });

  test('when the volume is out of range, then isError with a text naming volume (the SDK checks the input schema)', async () => {
    const bad = await call(session, 'submit_signal', { action: 'buy', symbol: 'EURUSD', volume: 1000, accountId: f.accounts[0]!.id });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/volume/);
    expect(textOf(bad)).toMatch(/100/);
  });

  test('when an action rule is broken, then the client refuses before sending, with the field and what to do', async () => {
    const missing = await call(session, 'submit_signal', { action: 'buy', symbol: 'EURUSD' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^refused 400 \(checked before sending; nothing was sent\): volume: volume is required for buy — fix/);
    expect(missing.structuredContent).toMatchObject({ kind: 'refused', status: 400, local: true, details: [{ path: 'volume' }] });
  });

  test("when the agent tries to pass a secret, then the call is refused: the secret is the server's alone", async () => {
    const smuggled = await call(session, 'submit_signal', { action: 'buy', symbol: 'EURUSD', volume: 0.1, secret: 'whsec_agent_supplied_0000000000' });
    expect(smuggled.isError).toBe(true);
    expect(textOf(smuggled)).toMatch(/secret/);
  });

  test('when the service refuses (account not linked to the secret), then isError with the status and no retry advice', async () => {
    const refused = await call(session, 'submit_signal', { action: 'buy', symbol: 'EURUSD', volume: 0.1, accountId: 'acc-not-linked-to-this-secret' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ kind: 'refused', status: 401, local: false, attempts: 1 });
    expect(textOf(refused)).toMatch(/^refused 401: .* retrying as is will not help/);
  });

  test('when nothing was ever echoed, then neither the webhook secret nor the API token appears in any tool output or log', async () => {
    const everything = session.transcript.join('\n');
    expect(everything.length).toBeGreaterThan(0);
    expect(everything).not.toContain(f.secret);
    expect(everything).not.toContain(f.token);
  });
});

describe('the MCP server without credentials', () => {
  test('when no secret or token is configured, then the tools say so (isError) and send nothing', async () => {
    const session = await connect({ SIGNALS_BASE_URL: 'http://127.0.0.1:9' });
    try {
      const submit = await call(session, 'submit_signal', { action: 'close_all' });
      expect(submit.isError).toBe(true);
      expect(textOf(submit)).toMatch(/SIGNALS_WEBHOOK_SECRET/);
      const status = await call(session, 'get_signal_status', { signalId: 'sig_0123456789abcdef0123456789abcdef' });
      expect(status.isError).toBe(true);
      expect(textOf(status)).toMatch(/SIGNALS_API_TOKEN/);
      expect(session.transcript.join('')).toMatch(/not set: SIGNALS_WEBHOOK_SECRET, SIGNALS_API_TOKEN/);
    } finally {
      await session.close();
    }
  });
});
