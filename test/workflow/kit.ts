/**
 * The workflows under Temporal's time-skipping test server (scripts/ensure-test-server.sh): a wait of minutes runs in
 * milliseconds, so expiry, withdrawal and `bridge_offline` are tested as the workflows decide them. The activities are
 * the edge here: an in-memory command queue that records what the workflow asked of it and answers as a test says.
 * Everything else (Redis, the bridge) is covered by the integration and end-to-end suites on the real stack.
 */
import { randomBytes } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { INDEXED_VALUE_TYPES, SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type InjectedSinks } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { OutcomeSinks } from '../../workflows/sinks';
import type { BridgeCommand, BridgeReport } from '../../src/domain/bridge-protocol';
import type { CoalescedTradeEvent } from '../../src/domain/callback';
import type { AdoptResult, EnqueueResult, WithdrawResult } from '../../src/bridge/queue';
import { accountSchema } from '../../src/domain/account';
import type { AccountTarget, SignalInstruction } from '../../src/domain/workflow-input';

const quiet = new DefaultLogger('WARN');
if (!Runtime._instance) Runtime.install({ logger: quiet });

/** What the workflow asked of the command queue, in order. */
interface QueueCalls {
  dispatched: { commandId: string; resend: boolean }[];
  /** The commands dispatched, whole, as a bridge would receive them. */
  commands: BridgeCommand[];
  /** Commands the workflow adopted (dispatch at acceptance: the ingress may have queued them). */
  adopted: string[];
  withdrawn: { commandId: string; queued: boolean }[];
  released: { accountId: string; seq: number }[];
  /** The workflow looked in Redis for the recorded report of these commands. */
  looked: string[];
  /** Outcomes pushed to callbacks: one entry per endpoint attempt. */
  callbacks: { endpointId: string; messageId: string; body: string }[];
  /** The coalesced trade events read, as [owner, window]. */
  coalescedReads: [string, number][];
}

/** The command queue as the workflows see it (activities/index.ts), answering `withdraw` as the test says. */
export function queueDouble(
  answers: {
    withdraw?: WithdrawResult;
    dispatch?: EnqueueResult;
    adopt?: AdoptResult;
    recorded?: (commandId: string) => BridgeReport | null;
    coalesced?: { events: CoalescedTradeEvent[]; omitted: number };
  } = {},
) {
  const calls: QueueCalls = { dispatched: [], commands: [], adopted: [], withdrawn: [], released: [], looked: [], callbacks: [], coalescedReads: [] };
  const activities: Activities = {
    async dispatchCommand(command: BridgeCommand, options?: { resend?: boolean }) {
      calls.dispatched.push({ commandId: command.commandId, resend: options?.resend ?? false });
      calls.commands.push(command);
      return answers.dispatch ?? 'queued';
    },
    async adoptCommand(command: BridgeCommand) {
      calls.adopted.push(command.commandId);
      calls.commands.push(command);
      return answers.adopt ?? { state: 'queued' };
    },
    async releaseSequence(accountId: string, seq: number) {
      calls.released.push({ accountId, seq });
    },
    async recordedReport(_accountId: string, commandId: string) {
      calls.looked.push(commandId);
      return answers.recorded?.(commandId) ?? null;
    },
    async withdrawCommand(_accountId: string, commandId: string, queued = false) {
      calls.withdrawn.push({ commandId, queued });
      return answers.withdraw ?? 'withdrawn';
    },
    async deliverCallback(req) {
      calls.callbacks.push({ endpointId: req.endpointId, messageId: req.messageId, body: req.body });
      return 'delivered' as const;
    },
    async coalescedTradeEvents(owner: string, window: number) {
      calls.coalescedReads.push([owner, window]);
      return answers.coalesced ?? { events: [], omitted: 0 };
    },
  };
  return { activities, calls };
}

export interface WorkflowKit {
  env: TestWorkflowEnvironment;
  /** Runs `body` with a worker of the workflows and these activities on a task queue of its own. */
  withWorker<T>(activities: Activities, body: (taskQueue: string) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The SDK gives the test server 5 s to listen (a fixed limit in its core); the JVM takes about 3 s on this machine
 * and more when CI shares its two cores with a dev server and other test files. A start that missed that limit is
 * tried again, at most three times in all; any other failure is thrown at once.
 */
async function startTimeSkipping(path: string): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
    } catch (err) {
      if (attempt >= 3 || !(err instanceof Error) || !/did not start within/.test(err.message)) throw err;
    }
  }
}

async function startWorkflowKit(): Promise<WorkflowKit> {
  const path = process.env.TEMPORAL_TEST_SERVER_BIN;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER_BIN is not set: scripts/test.sh builds it with scripts/ensure-test-server.sh');
  const env = await startTimeSkipping(path);
  // The search attributes the workflows set, registered as every other Temporal of the project has them.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((a) => [a.name, INDEXED_VALUE_TYPES[a.type]])),
  });
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quiet });
  const sinks: InjectedSinks<OutcomeSinks> = { outcomes: { record: { fn: () => undefined, callDuringReplay: false } } };
  return {
    env,
    async withWorker(activities, body) {
      const taskQueue = `wf-${randomBytes(4).toString('hex')}`;
      const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: { code }, activities, sinks });
      return worker.runUntil(body(taskQueue));
    },
    close: () => env.teardown(),
  };
}

/** The kit of one test file: started before its tests, torn down after them. */
export function useWorkflowKit(): () => WorkflowKit {
  let kit: WorkflowKit | undefined;
  beforeAll(async () => {
    kit = await startWorkflowKit();
  }, 120_000);
  afterAll(async () => {
    await kit?.close();
  });
  return () => kit!;
}

export const BUY: SignalInstruction = { action: 'buy', symbol: 'EURUSD', volume: 0.01 };

/** An MT5 account's target as the ingress builds it, with the account's defaults; `expiresAt` from `nowMs`. */
export function target(accountId: string, nowMs: number, ttlMs: number): AccountTarget {
  const account = accountSchema.parse({ id: accountId, owner: 'alice', platform: 'mt5', bridgeVersion: '2.1.0', risk: { maxSignalAgeMs: ttlMs } });
  const { id, owner, platform, region, bridgeVersion, risk, symbols } = account;
  return { account: { id, owner, platform, region, bridgeVersion, risk, symbols }, seq: 1, expiresAt: new Date(nowMs + ttlMs).toISOString() };
}

export const newSignalId = (): string => `sig_${randomBytes(12).toString('hex')}`;
