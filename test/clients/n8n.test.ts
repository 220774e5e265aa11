import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { hashCredential, newCredential } from '../../src/registry/credentials';
import { REPO_ROOT, runDir } from '../../support/infra';
import { seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';

/**
 * docs/integrations/n8n/ in a real n8n (2.8.4, the newest for Node 20; scripts/ensure-n8n.sh installs it outside the
 * checkout): the credentials are imported first, as the guide says, then the workflow, with only its Build signal
 * values changed as a user would; `n8n execute` runs it against the real ingress while terminals fill the orders.
 */
const run = promisify(execFile);
const N8N = process.env.N8N_BIN ?? '';
const WORKFLOW = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'docs', 'integrations', 'n8n', 'external-signals.workflow.json'), 'utf8')) as {
  nodes: { name: string; parameters: Record<string, unknown> }[];
};

interface OutcomeItem {
  signalId: string;
  accountId?: string;
  outcome: string | null;
  ticket?: string | null;
  complete: boolean;
  note?: string;
}

describe('the n8n workflow in a real n8n', () => {
  let stack: Stack;
  let home: string;
  let executions = 0;
  beforeAll(async () => {
    if (!N8N) throw new Error('N8N_BIN is not set: scripts/test.sh installs n8n with scripts/ensure-n8n.sh');
    stack = await startStack();
    home = path.join(runDir(), `n8n-${process.pid}`);
    fs.mkdirSync(home, { recursive: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  // n8n prints `execute --rawOutput`'s result through its logger: its log level must stay at info (the default).
  const n8n = (args: string[]) =>
    run(N8N, args, {
      env: { PATH: process.env.PATH ?? '', HOME: home, N8N_USER_FOLDER: home, N8N_DIAGNOSTICS_ENABLED: 'false', N8N_RUNNERS_ENABLED: 'false' },
      timeout: 170_000,
      maxBuffer: 64 * 1024 * 1024,
    });

  /** Imports the credentials (first) and the workflow with Build signal's values set, runs it, returns the last node's items. */
  async function execute(
    f: Fixture,
    token: string,
    build: { accountId: string; expectAccounts?: number; maxPolls?: number },
  ): Promise<{ items: OutcomeItem[]; lastNode: string }> {
    const credentials = [
      {
        id: 'esWebhookSecret1',
        name: 'External Signals webhook secret',
        type: 'httpCustomAuth',
        data: { json: JSON.stringify({ body: { secret: f.secret } }) },
      },
      { id: 'esApiToken000001', name: 'External Signals API token', type: 'httpHeaderAuth', data: { name: 'Authorization', value: `Bearer ${token}` } },
    ];
    const credentialsFile = path.join(home, 'credentials.json');
    fs.writeFileSync(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
    await n8n(['import:credentials', `--input=${credentialsFile}`]);
    fs.rmSync(credentialsFile);

    const workflow = structuredClone(WORKFLOW) as typeof WORKFLOW & { id: string };
    workflow.id = 'esWorkflowTest01';
    const node = workflow.nodes.find((n) => n.name === 'Build signal')!;
    const code = node.parameters.jsCode as string;
    const edited = code
      .replace("const baseUrl = 'https://signals.example.com';", `const baseUrl = '${stack.ingress.url}';`)
      .replace("const accountId = 'acc-1';", `const accountId = '${build.accountId}';`)
      .replace('const expectAccounts = 0;', `const expectAccounts = ${build.expectAccounts ?? 0};`)
      .replace('maxPolls: 20,', `maxPolls: ${build.maxPolls ?? 20},`);
    // Each value the user edits is where the guide says it is.
    expect(edited).toContain(`const baseUrl = '${stack.ingress.url}';`);
    expect(edited).toContain(`const accountId = '${build.accountId}';`);
    expect(edited).toContain(`const expectAccounts = ${build.expectAccounts ?? 0};`);
    expect(edited).toContain(`maxPolls: ${build.maxPolls ?? 20},`);
    node.parameters.jsCode = edited;
    const workflowFile = path.join(home, 'workflow.json');
    fs.writeFileSync(workflowFile, JSON.stringify([workflow]));
    await n8n(['import:workflow', `--input=${workflowFile}`]);

    const { stdout } = await n8n(['execute', '--id=esWorkflowTest01', '--rawOutput']);
    fs.writeFileSync(path.join(home, `execute-${++executions}.out`), stdout);
    const json = stdout.indexOf('\n{');
    if (json < 0) throw new Error(`n8n execute printed no JSON result: ${stdout.slice(0, 2000)}`);
    const result = JSON.parse(stdout.slice(json + 1)) as {
      status: string;
      data: { resultData: { lastNodeExecuted: string; runData: Record<string, { data: { main: { json: OutcomeItem }[][] } }[]> } };
    };
    expect(result.status).toBe('success');
    const lastNode = result.data.resultData.lastNodeExecuted;
    const runs = result.data.resultData.runData[lastNode]!;
    return { lastNode, items: runs.at(-1)!.data.main[0]!.map((i) => i.json) };
  }

  /** Fills every command the terminals get, with tickets per account, until stopped. */
  function fillAll(f: Fixture, accounts: number[]): { stop: () => void; done: Promise<void> } {
    let stopped = false;
    const done = Promise.all(
      accounts.map(async (i) => {
        const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[i]!.bridgeToken);
        await terminal.hello();
        while (!stopped) {
          const commands = await terminal.nextCommands(1, 2_000).catch(() => []);
          if (commands.length > 0) await terminal.report(commands.map((c, k) => ({ commandId: c.commandId, status: 'filled', ticket: `7${i}${k}` })));
        }
      }),
    ).then(() => undefined);
    return { stop: () => (stopped = true), done };
  }

  test('when a buy goes to one account, then the workflow outputs it filled with the ticket', async () => {
    const f = await seedOwner(stack.registry);
    const bridge = fillAll(f, [0]);
    try {
      const { lastNode, items } = await execute(f, f.token, { accountId: f.accounts[0]!.id });
      expect(lastNode).toBe('Outcome per account');
      expect(items).toEqual([expect.objectContaining({ accountId: f.accounts[0]!.id, outcome: 'filled', ticket: '700', complete: true })]);
    } finally {
      bridge.stop();
      await bridge.done;
    }
  }, 180_000);

  test('when a broadcast reaches 3 accounts and the token reads 2, then with expectAccounts 2 it ends with both, and without it it still outputs them, incomplete', async () => {
    const f = await seedOwner(stack.registry, [{}, {}, {}]);
    const two = newCredential('tok');
    await stack.registry.putToken({ hash: hashCredential(two), owner: f.owner, accounts: [f.accounts[0]!.id, f.accounts[1]!.id], suspendedUntil: null });
    const bridge = fillAll(f, [0, 1, 2]);
    try {
      const told = await execute(f, two, { accountId: '', expectAccounts: 2 });
      expect(told.lastNode).toBe('Outcome per account');
      expect(told.items.map((i) => [i.accountId, i.outcome, i.complete]).sort()).toEqual([
        [f.accounts[0]!.id, 'filled', true],
        [f.accounts[1]!.id, 'filled', true],
      ]);
      // Without expectAccounts it waits for all 3, which this token can never see: at the end of its polls it
      // outputs the 2 it has, marked incomplete, instead of failing.
      const untold = await execute(f, two, { accountId: '', maxPolls: 2 });
      expect(untold.lastNode).toBe('Outcomes so far');
      expect(untold.items.map((i) => [i.accountId, i.outcome, i.complete]).sort()).toEqual([
        [f.accounts[0]!.id, 'filled', false],
        [f.accounts[1]!.id, 'filled', false],
      ]);
      expect(untold.items[0]!.note).toMatch(/^2 of 3 outcome\(s\) after 2 polls/);
    } finally {
      bridge.stop();
      await bridge.done;
    }
  }, 300_000);
});
