import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { OPERATOR_VIEWS, operatorViewBookmarklet, type BrowserStorage } from '../../scripts/temporal-ui-view';
import { launchChromium } from '../../support/chromium';
import { testEnv } from '../../support/env';
import { REPO_ROOT, runDir } from '../../support/infra';
import { pollUntilReported, post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';

/**
 * The operator's question "which signals were rejected, and why" answered in the real Temporal UI (the dev server's,
 * in Debian's headless Chromium): a rejected account's workflow is listed by its Reason, and after the one-time
 * setup (scripts/temporal-ui-view.ts) its row shows Outcome and Reason; a running account's workflow says what it
 * waits for. The cluster profile runs its UI separately (make cluster), so there this check is skipped. Screenshots:
 * the run directory, and docs/screenshots/temporal-ui-rejected-view.png.
 */
const uiUrl = process.env.TEST_TEMPORAL_UI ?? '';
const describeWithUi = uiUrl ? describe : describe.skip;
const namespace = () => testEnv().temporalNamespace;
const listUrl = (q: string) => `${uiUrl}/namespaces/${namespace()}/workflows?query=${encodeURIComponent(q)}`;
const ROW = 'tr[data-testid="workflows-summary-configurable-table-row"]';

describeWithUi('the Temporal UI, as an operator uses it', () => {
  let stack: Stack;
  let browser: Browser;
  beforeAll(async () => {
    stack = await startStack();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** A signal to a fresh account whose bridge takes the command; `report` rejects it with `No money`, else it waits. */
  async function sendSignal(report: boolean): Promise<{ signalId: string; workflowId: string }> {
    const f = await seedOwner(stack.registry);
    const account = f.accounts[0]!;
    const terminal = new ScriptedTerminal(stack.ingress.url, account.bridgeToken);
    await terminal.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${account.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const signalId = res.body.signalId as string;
    const [command] = await terminal.nextCommands(1);
    if (report) {
      await terminal.report([{ commandId: command!.commandId, status: 'rejected', retcode: 10019, message: 'No money' }]);
      await pollUntilReported(stack.ingress.url, signalId, f.token, 1);
    }
    return { signalId, workflowId: `signal/${signalId}/account/${account.id}` };
  }

  /**
   * Visibility is eventually consistent and the UI is a single-page app: the list is loaded again until the row is
   * there, each time waiting for the app to settle, within one deadline.
   */
  async function openListWithRow(page: Page, query: string, workflowId: string, shot: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      await page.goto(listUrl(query));
      await page.waitForLoadState('networkidle');
      const found = await page
        .locator(ROW, { hasText: workflowId })
        .first()
        .waitFor({ state: 'visible', timeout: 5_000 })
        .then(
          () => true,
          () => false,
        );
      if (found) return;
      if (Date.now() > deadline) {
        await page.screenshot({ path: path.join(runDir(), shot), fullPage: true });
        throw new Error(`the Temporal UI did not list ${workflowId} for ${query} within 60 s (screenshot ${shot} in the run dir)`);
      }
    }
  }

  /** The row's text under each column header, as the operator reads it. */
  async function rowByColumn(page: Page, workflowId: string): Promise<Record<string, string>> {
    const headers = await page
      .locator('th[data-testid^="workflows-summary-table-header-cell-"]')
      .evaluateAll((ths) => ths.map((th) => th.getAttribute('data-testid')!.replace('workflows-summary-table-header-cell-', '')));
    const cells = await page.locator(ROW, { hasText: workflowId }).first().locator('td[data-testid="workflows-summary-table-body-cell"]').allInnerTexts();
    return Object.fromEntries(headers.map((h, i) => [h, (cells[i] ?? '').trim()]));
  }

  /**
   * What the browser does with a `javascript:` bookmark clicked on the UI's page: percent-decodes it and runs it there.
   * It ends by opening the first view, from the plain list, so its arrival is seen.
   */
  async function clickBookmarklet(page: Page): Promise<void> {
    await page.goto(`${uiUrl}/namespaces/${namespace()}/workflows`);
    await page.waitForLoadState('networkidle');
    await page.evaluate(decodeURIComponent(operatorViewBookmarklet(namespace()).slice('javascript:'.length)));
    await page.waitForURL((u) => u.searchParams.get('query') === OPERATOR_VIEWS[0]!.query, { waitUntil: 'networkidle' });
  }

  /** The Current Details on the workflow's User Metadata tab, reached from its row as an operator does. */
  async function currentDetails(page: Page, workflowId: string, startsWith: string): Promise<string | null> {
    await openListWithRow(page, `WorkflowId="${workflowId}"`, workflowId, 'temporal-ui-details.png');
    await page.locator(ROW, { hasText: workflowId }).first().getByRole('link', { name: workflowId }).first().click();
    await page.waitForURL(/\/history/);
    await page.goto(page.url().replace(/\/history.*$/, '/user-metadata'));
    // The UI renders the details as markdown in an iframe whose address carries them.
    const frame = `iframe[src*="content=${encodeURIComponent(startsWith)}"]`;
    await page.locator(frame).waitFor({ state: 'visible', timeout: 20_000 });
    await expect(page.frameLocator(frame).getByText(startsWith, { exact: false }).first().isVisible()).resolves.toBe(true);
    return new URL((await page.locator(frame).getAttribute('src'))!, uiUrl).searchParams.get('content');
  }

  test("when an account rejects a signal, then the workflow list filtered by Reason shows that account's workflow", async () => {
    const { signalId, workflowId } = await sendSignal(true);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openListWithRow(page, `SignalId="${signalId}" AND Reason="broker:10019"`, workflowId, 'temporal-ui-reason.png');
    await page.screenshot({ path: path.join(runDir(), 'temporal-ui-reason.png'), fullPage: true });
    // The filled sibling query lists nothing for this signal: the filter is the reason, not the signal.
    await page.goto(listUrl(`SignalId="${signalId}" AND Outcome="filled"`));
    await page.waitForLoadState('networkidle');
    await page
      .getByText(/0 Workflows|No Workflows/)
      .first()
      .waitFor({ state: 'visible', timeout: 20_000 });
    expect(await page.getByText(workflowId, { exact: false }).count()).toBe(0);
    await page.close();
  });

  test('when the operator has run the bookmarklet once, then the "Rejected accounts" view lists a rejected account with its Outcome and Reason in its row', async () => {
    const { workflowId } = await sendSignal(true);
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    // Before the setup the row has no such columns: the UI's defaults (what every operator sees today).
    await openListWithRow(page, OPERATOR_VIEWS[0]!.query, workflowId, 'temporal-ui-before-view.png');
    expect(Object.keys(await rowByColumn(page, workflowId))).not.toContain('Outcome');

    await clickBookmarklet(page);
    await openListWithRow(page, OPERATOR_VIEWS[0]!.query, workflowId, 'temporal-ui-rejected-view.png');
    const row = await rowByColumn(page, workflowId);
    expect(row).toMatchObject({ Status: 'Completed', Outcome: 'rejected', Reason: 'broker:10019' });
    for (const view of OPERATOR_VIEWS) await expect(page.getByText(view.name, { exact: true }).first().isVisible()).resolves.toBe(true);
    const shots = path.join(REPO_ROOT, 'docs', 'screenshots');
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, 'temporal-ui-rejected-view.png') });
    // Closed, its Current Details say its outcome (answered by a worker replaying its history).
    expect(await currentDetails(page, workflowId, 'rejected')).toBe('rejected: broker:10019 No money');

    // Run twice, it changes nothing: one view of each name, each column once.
    await clickBookmarklet(page);
    const stored = await page.evaluate(() => {
      const storage = (globalThis as unknown as { localStorage: BrowserStorage }).localStorage;
      return [storage.getItem('saved-workflow-queries'), storage.getItem('namespace-workflow-table-columns')];
    });
    const views = (JSON.parse(stored[0]!) as Record<string, { name: string }[]>)[namespace()]!.map((v) => v.name);
    expect(views.sort()).toEqual(OPERATOR_VIEWS.map((v) => v.name).sort());
    const columns = (JSON.parse(stored[1]!) as Record<string, { label: string }[]>)[namespace()]!.map((c) => c.label);
    expect(columns).toEqual(['Status', 'Outcome', 'Reason', 'Workflow ID', 'Run ID', 'Type', 'Start', 'End']);
    await page.close();
  });

  test("when an account's workflow waits for its bridge's report, then its Current Details say for whom and until when", async () => {
    const { signalId, workflowId } = await sendSignal(false);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const content = await currentDetails(page, workflowId, 'waiting for');
    expect(content).toMatch(new RegExp(`^waiting for acc-[0-9a-f]+-0's bridge report for ${signalId}, until \\d{4}-\\d{2}-\\d{2}T`));
    await page.screenshot({ path: path.join(runDir(), 'temporal-ui-waiting.png'), fullPage: true });
    await page.close();
  });
});
