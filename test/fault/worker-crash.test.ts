import path from 'node:path';
import type { Redis } from 'ioredis';
import { readLedger } from '../../src/paper/ledger';
import { testEnv } from '../../support/env';
import { startTemporal, waitFor, type TemporalServer } from '../../support/infra';
import {
  ensureBuilt,
  restart,
  serviceEnv,
  startPaperBridgeProcess,
  startProcessStack,
  type ExitInfo,
  type PaperBridgeProcess,
  type ProcessStack,
} from '../../support/processes';
import {
  commandIdOf,
  commandState,
  kindOf503,
  httpGet,
  httpPost,
  importRegistry,
  listExecutions,
  makeRegistry,
  ordersByCommand,
  pollUntilReported,
  redisClient,
  retryUntilAccepted,
  runBounded,
  scenarioDir,
  signalGroup,
  tally,
  temporalClient,
  waitForOrders,
  writeRegistryFile,
  type TemporalView,
} from './kit';
import { MARKET_FILL } from '../helpers/poll-items';
import { describeOrUndefined, workflowResult } from '../helpers/temporal';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * Fault injection: the worker dies by SIGKILL (no shutdown, activities and workflow tasks cut off mid-way) while
 * signals keep arriving, and comes back. The worker is the only process that dies. Every accepted signal must still
 * reach its outcome, and the broker must see each order exactly once. The 300-signal burst (about 900 workflows with
 * the idempotency windows) runs on a Temporal dev server of its own, so it does not slow the run's shared one down for
 * the other test files; Redis is the run's shared one.
 */

/** How a killed group's leader ended: by the signal itself, or 128 + 9 when the wrapper reported it. */
const killedBySigkill = (exit: unknown) => (exit as ExitInfo | null)?.signal === 'SIGKILL' || (exit as ExitInfo | null)?.code === 137;

const SIGNALS = 300;
const ACCOUNTS = 10;
const KILL_AT = 100;
const RESTART_AT = 200;

const reg = makeRegistry('wkill', ACCOUNTS + 1);
const burstAccounts = reg.accounts.slice(0, ACCOUNTS);
/** The account of the issue-4 variant, run by a paper bridge of its own that can be frozen alone. */
const frozenAccount = reg.accounts[ACCOUNTS]!;

describe('the worker is killed with SIGKILL and restarted', () => {
  let dir: string;
  let ledgerFile: string;
  let ledgerB: string;
  let stack: ProcessStack | undefined;
  let bridgeB: PaperBridgeProcess | undefined;
  let temporalServer: TemporalServer | undefined;
  let temporal: TemporalView | undefined;
  let redis: Redis | undefined;

  const url = () => stack!.ingress.url;
  const describeAll = () => [...stack!.all(), ...(bridgeB ? [bridgeB] : [])].map((p) => p.describe()).join('\n');

  beforeAll(async () => {
    ensureBuilt();
    dir = scenarioDir(reg.tag);
    ledgerFile = path.join(dir, 'ledger.jsonl');
    ledgerB = path.join(dir, 'ledger-b.jsonl');
    temporalServer = await startTemporal();
    await importRegistry(writeRegistryFile(dir, 'registry.json', reg), serviceEnv());
    stack = await startProcessStack({
      registryFile: writeRegistryFile(
        dir,
        'bridge-a.json',
        reg,
        burstAccounts.map((a) => a.id),
      ),
      ledgerFile,
      // A frozen terminal's long-poll must stay open long enough for the command to reach it. Signals accepted
      // while the worker is dead are admitted: the door refuses only what Redis cannot hold.
      env: { BRIDGE_MAX_WAIT_MS: '120000', TEMPORAL_ADDRESS: temporalServer.address, TEMPORAL_NAMESPACE: 'default' },
    });
    temporal = await temporalClient({ address: temporalServer.address, namespace: 'default' });
    redis = redisClient(testEnv().redisUrl);
  }, 120_000);

  afterAll(async () => {
    if (bridgeB?.running) signalGroup(bridgeB.pid, 'SIGCONT');
    await bridgeB?.stop();
    await stack?.stop();
    await temporal?.close();
    await temporalServer?.stop();
    redis?.disconnect();
  });

  test(
    `when the worker is killed -9 after ${KILL_AT} of ${SIGNALS} signals over ${ACCOUNTS} accounts and restarted after ${RESTART_AT}, ` +
      'then every signal gets its 202 (a 503 retried with its key) and is filled on the poll, and the ledger holds exactly one order per (signal, account)',
    async () => {
      const started = Date.now();
      let accepted = 0;
      let killed: Promise<unknown> | undefined;
      let restarted: Promise<void> | undefined;
      let killedAt = 0;
      let killSentAt = 0;
      let restartedAt = 0;
      const symbols = ['EURUSD', 'GBPUSD', 'USDJPY'];
      const signalOf = (i: number) => ({
        accountId: burstAccounts[i % ACCOUNTS]!.id,
        side: (i * 7) % 3 === 0 ? ('sell' as const) : ('buy' as const),
        symbol: symbols[i % symbols.length]!,
      });
      const request = (i: number) => {
        const { accountId, side, symbol } = signalOf(i);
        return httpPost(
          `${url()}/webhook/custom/${accountId}`,
          { secret: reg.secret, action: side, symbol, volume: 0.01 },
          { 'x-idempotency-key': `${reg.tag}-${i}` },
        );
      };

      const results = await runBounded({
        count: SIGNALS,
        concurrency: 10,
        deadlineMs: 90_000,
        send: (i) => ({ meta: signalOf(i), request: () => request(i) }),
        onDone: (sent) => {
          if (sent.status === 202) accepted++;
          if (!killed && accepted >= KILL_AT) {
            // SIGKILL is delivered at once; kill9() resolves only once the process group is gone, which under load
            // can take longer than the next 100 acceptances.
            killSentAt = Date.now();
            killed = stack!.worker.kill9().then((exit) => {
              killedAt = Date.now();
              return exit;
            });
          }
          if (killed && !restarted && accepted >= RESTART_AT) {
            restarted = killed.then(async () => {
              await restart(stack!.worker);
              restartedAt = Date.now();
            });
          }
        },
      });
      // The burst may end before the restart point was reached (it cannot, with 300 > 200, unless answers failed).
      expect(killed).toBeDefined();
      const exit = await killed;
      if (!restarted) restarted = restart(stack!.worker).then(() => void (restartedAt = Date.now()));
      await restarted;
      const burstMs = Date.now() - started;

      // The ingress needs no worker: every answer is a 202, or one of spec §4.1's two 503s when the Temporal server is
      // slow (backpressure, or a pollable partial acceptance when a start may have happened); never a 500, never a hang.
      expect(results).toHaveLength(SIGNALS);
      const firstStatuses = tally(results, (r) => (r.status === 503 ? `503 ${kindOf503(r)}` : r.status));
      for (const r of results) {
        if (r.status !== 202)
          expect({ index: r.index, status: r.status, kind: kindOf503(r), error: r.error }).toEqual({
            index: r.index,
            status: 503,
            kind: expect.any(String),
            error: undefined,
          });
      }
      // Signals were accepted while the worker was dead, i.e. the kill really happened mid-burst.
      const whileDown = results.filter((r) => r.status === 202 && r.sentAt >= killSentAt && r.doneAt <= restartedAt).length;
      expect(whileDown).toBeGreaterThan(0);
      expect(killedBySigkill(exit)).toBe(true);
      expect(stack!.worker.spawns).toBe(2);

      // A 503 asks the caller to retry: it does, with the same key, as a client would (a 503 may come from a start that
      // Temporal did record after our deadline; the key makes the retry a replay, not a second order).
      const retried = await retryUntilAccepted(results, (r) => request(r.index));
      const ok = results.map((r) => retried.get(r.index) ?? r);
      expect(tally(ok, (r) => r.status)).toEqual({ 202: SIGNALS });
      const signalIds = ok.map((r) => r.body.signalId as string);
      expect(new Set(signalIds).size).toBe(ok.length);
      const expectedCommands = new Set(ok.map((r) => commandIdOf(r.body.signalId as string, r.meta.accountId)));
      // Watch the broker first (a file read), then ask the poll once the orders are there.
      await waitForOrders(ledgerFile, [...expectedCommands], 180_000, describeAll);
      const filledMs = Date.now() - started;
      const outcomes = await pollUntilReported(url, reg.token, signalIds, { deadlineMs: 60_000, concurrency: 8, describe: describeAll });
      const reportedMs = Date.now() - started;
      console.log(
        `[fault] worker kill -9: ${SIGNALS} signals (first answers ${JSON.stringify(firstStatuses)}, ${retried.size} retried), ${whileDown} accepted while the worker was down ` +
          `(down ${restartedAt - killedAt} ms), burst+restart ${burstMs} ms, all in the ledger after ${filledMs} ms, all reported on the poll after ${reportedMs} ms; ` +
          `bridge replays from its journal: ${stack!.bridge.commands().filter((c) => c.replayed === true).length}`,
      );

      const orders = ordersByCommand(ledgerFile);
      for (const r of ok) {
        const signalId = r.body.signalId as string;
        const accounts = outcomes.get(signalId)!.accounts;
        expect(accounts).toEqual([
          {
            accountId: r.meta.accountId,
            outcome: 'filled',
            ticket: expect.stringMatching(/^\d+$/),
            reason: null,
            occurredAt: expect.any(String),
            ...MARKET_FILL,
          },
        ]);
        const lines = orders.get(commandIdOf(signalId, r.meta.accountId)) ?? [];
        expect(lines.map((l) => ({ op: l.op, accountId: l.accountId, ticket: l.ticket, side: l.side, symbol: l.symbol }))).toEqual([
          { op: 'open', accountId: r.meta.accountId, ticket: accounts[0]!.ticket, side: r.meta.side, symbol: r.meta.symbol },
        ]);
      }
      // No order in the ledger that no accepted signal asked for.
      expect([...orders.keys()].filter((id) => !expectedCommands.has(id))).toEqual([]);
      expect([...orders.values()].reduce((n, l) => n + l.length, 0)).toBe(ok.length);

      // Temporal agrees: one completed signal workflow and one completed account workflow per accepted signal.
      const query = (type: string) => `TaskQueue = "${stack!.env.TEMPORAL_TASK_QUEUE}" AND WorkflowType = "${type}"`;
      let seen: { signals: { workflowId: string; status: string }[]; accounts: { workflowId: string; status: string }[] } | undefined;
      const executions = await waitFor(
        'Temporal visibility to list every execution as completed',
        async () => {
          const [signals, accounts] = await Promise.all([
            listExecutions(temporal!.client, query('signalWorkflow')),
            listExecutions(temporal!.client, query('accountWorkflow')),
          ]);
          seen = { signals, accounts };
          const done = (l: { status: string }[]) => l.length === ok.length && l.every((e) => e.status === 'COMPLETED');
          return done(signals) && done(accounts) ? { signals, accounts } : undefined;
        },
        60_000,
        250,
      ).catch(async (err: unknown) => {
        // Say which executions kept it waiting, and what Temporal says of the first of them.
        const open = [...(seen?.signals ?? []), ...(seen?.accounts ?? [])].filter((e) => e.status !== 'COMPLETED');
        const first = open[0] ? await describeOrUndefined(temporal!.client, open[0].workflowId) : undefined;
        throw new Error(
          `${(err as Error).message}: listed ${seen?.signals.length} signal and ${seen?.accounts.length} account executions of ${ok.length}; ` +
            `not completed: ${JSON.stringify(open.slice(0, 10))}; the first: ${JSON.stringify(first?.raw.pendingActivities ?? null)} ${first?.status.name}`,
        );
      });
      expect(new Set(executions.accounts.map((e) => e.workflowId))).toEqual(expectedCommands);
      const first = await temporal!.client.workflow.getHandle(commandIdOf(ok[0]!.body.signalId as string, ok[0]!.meta.accountId)).result();
      expect(first).toMatchObject({ outcome: 'filled', ticket: outcomes.get(ok[0]!.body.signalId as string)!.accounts[0]!.ticket });
    },
    300_000,
  );

  test(
    'when the worker is killed -9 after the bridge has taken a command and before it reports (issue 4), then the report still lands: ' +
      'one order in the ledger, and the outcome is filled with that ticket once the worker is back',
    async () => {
      // A bridge of its own for one account, with the connection dropping once after it places the order.
      const registryB = writeRegistryFile(dir, 'bridge-b.json', reg, [frozenAccount.id]);
      bridgeB = await startPaperBridgeProcess({
        registryFile: registryB,
        ledgerFile: ledgerB,
        ingressUrl: url(),
        extraArgs: ['--fault', `drop-before-report:1@${frozenAccount.id}`, '--wait-ms', '120000'],
        label: 'bridge-b',
      });
      expect(stack!.worker.running).toBe(true);

      // Freeze the terminal while its long-poll is open: the ingress hands it the command, it cannot act on it yet.
      // The poll is open once the ingress has subscribed to the account's channel (it does so to wait); a hello alone
      // does not mean the terminal has sent its first poll yet.
      await waitFor(
        "the terminal's long-poll to be open",
        async () => Number(((await redis!.pubsub('NUMSUB', bridgeKeys.wakeChannel(frozenAccount.id))) as [string, number])[1]) >= 1,
        30_000,
      );
      signalGroup(bridgeB.pid, 'SIGSTOP');
      const res = await httpPost(
        `${url()}/webhook/custom/${frozenAccount.id}`,
        { secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.02 },
        {
          'x-idempotency-key': `${reg.tag}-issue4`,
        },
      );
      expect(res.status).toBe(202);
      const signalId = res.body.signalId as string;
      const commandId = commandIdOf(signalId, frozenAccount.id);
      await waitFor(
        `command ${commandId} to be handed to the (frozen) bridge`,
        async () => (await commandState(redis!, frozenAccount.id, commandId)).deliveredAt !== undefined,
        60_000,
      ).catch(async (err: Error) => {
        const state = await commandState(redis!, frozenAccount.id, commandId).catch((e: Error) => e.message);
        throw new Error(`${err.message}; command state ${JSON.stringify(state)}\n${describeAll()}`);
      });
      expect(readLedger(ledgerB).filter((l) => l.commandId === commandId)).toEqual([]);

      // Now the worker dies, with the command taken and not reported.
      const exit = await stack!.worker.kill9();
      expect(killedBySigkill(exit)).toBe(true);
      expect(await commandState(redis!, frozenAccount.id, commandId)).toMatchObject({ exists: true, reported: false });

      // The terminal wakes: it places the order, loses the connection before the report, reconnects, gets the command
      // again, answers from its journal, and reports, all while no worker runs.
      signalGroup(bridgeB.pid, 'SIGCONT');
      await waitFor('the report to be recorded by the ingress', async () => (await commandState(redis!, frozenAccount.id, commandId)).reported, 20_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}\n${describeAll()}`);
        },
      );
      const orders = ordersByCommand(ledgerB).get(commandId) ?? [];
      expect(orders.map((l) => ({ op: l.op, accountId: l.accountId, side: l.side, volume: l.volume }))).toEqual([
        { op: 'open', accountId: frozenAccount.id, side: 'buy', volume: 0.02 },
      ]);
      const ticket = orders[0]!.ticket;
      expect(bridgeB.jsonLines('stderr').filter((l) => l.event === 'fault_drop_before_report')).toHaveLength(1);
      expect(
        bridgeB
          .commands()
          .filter((c) => c.commandId === commandId)
          .map((c) => ({ replayed: c.replayed, ticket: c.ticket, status: c.status })),
      ).toEqual([
        { replayed: false, ticket, status: 'filled' },
        { replayed: true, ticket, status: 'filled' },
      ]);
      // Without a worker nothing can record the outcome in Temporal yet, but the ingress kept the bridge's report when
      // it recorded it (docs/poll.md): the poll already shows that very ticket.
      const early = await httpGet(`${url()}/v1/signals/${signalId}`, { authorization: `Bearer ${reg.token}` });
      expect(early.body).toMatchObject({ status: 'reported', reported: 1, accounts: [{ accountId: frozenAccount.id, outcome: 'filled', ticket }] });

      await restart(stack!.worker);
      const outcome = await pollUntilReported(url, reg.token, [signalId], { deadlineMs: 60_000, describe: describeAll });
      expect(outcome.get(signalId)?.accounts).toEqual([
        { accountId: frozenAccount.id, outcome: 'filled', ticket, reason: null, occurredAt: expect.any(String), ...MARKET_FILL },
      ]);
      expect(await workflowResult(temporal!.client, commandId, 60_000)).toMatchObject({ outcome: 'filled', ticket });
      // Still exactly one order, after everything settled.
      expect(ordersByCommand(ledgerB).get(commandId)).toHaveLength(1);
    },
    120_000,
  );
});
