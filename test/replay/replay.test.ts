/**
 * Replays the recorded histories of test/replay/histories/ against the workflows as they are now: a change to
 * workflows/ that would break the executions running when it is deployed fails here (docs/workflow-tests.md).
 * Needs no Temporal server and no Redis: the histories are the input.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type InjectedSinks, type ReplayResult, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { OutcomeSinks } from '../../workflows/sinks';
import { historyFromJsonObject } from './history-json';
import type { RecordedHistory } from './record-histories';

const HISTORIES_DIR = path.join(__dirname, 'histories');
const files = fs
  .readdirSync(HISTORIES_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const load = (file: string): RecordedHistory => JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8')) as RecordedHistory;

// The worker's sink (metrics), as src/worker.ts injects it: never called during replay.
const sinks: InjectedSinks<OutcomeSinks> = { outcomes: { record: { fn: () => undefined, callDuringReplay: false } } };
const quiet = new DefaultLogger('WARN');
// The SDK's worker-state lines are noise here; a runtime is a process singleton, installed once (as src/worker.ts does).
if (!Runtime._instance) Runtime.install({ logger: quiet });

/** Bundled as src/worker.ts does when there is no prebuilt bundle: from the sources, so dist/ cannot be stale here. */
async function replayOptions(workflowsPath: string): Promise<ReplayWorkerOptions> {
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: quiet });
  return { workflowBundle: { code }, sinks };
}

describe('workflow replay: the recorded histories replay against the current workflows', () => {
  const results = new Map<string, ReplayResult>();
  beforeAll(async () => {
    const options = await replayOptions(require.resolve('../../workflows'));
    const histories = files.map((file) => {
      const { workflowId, history } = load(file);
      return { workflowId, history: historyFromJsonObject(history) };
    });
    for await (const result of Worker.runReplayHistories(options, histories)) results.set(result.workflowId, result);
  });

  test('the fixtures cover every recorded case: filled, risk refusal, bridge_offline, broadcast, expired, callback (both input shapes)', () => {
    const byCase = (prefix: string) =>
      files
        .filter((f) => f.startsWith(prefix))
        .map((f) => load(f).workflowType)
        .sort();
    expect(byCase('a-')).toEqual(['accountWorkflow', 'signalWorkflow']);
    expect(byCase('b-')).toEqual(['accountWorkflow']);
    expect(byCase('c-')).toEqual(['accountWorkflow']);
    expect(byCase('d-')).toEqual(['accountWorkflow', 'accountWorkflow', 'signalWorkflow']);
    expect(byCase('e-')).toEqual(['accountWorkflow']);
    expect(byCase('f-')).toEqual(['callbackWorkflow', 'signalWorkflow']);
    // Recorded by the first version of callbacks (endpoints per target), which main ran; not recordable any more.
    expect(byCase('g-')).toEqual(['signalWorkflow']);
  });

  test.each(files)('%s replays without a determinism error', (file) => {
    const { workflowId } = load(file);
    const result = results.get(workflowId);
    expect(result).toBeDefined();
    expect(result!.error).toBeUndefined();
  });
});

describe('workflow replay: the check can fail', () => {
  test('when accountWorkflow schedules a different activity than the recorded run, then replay throws DeterminismViolationError', async () => {
    const options = await replayOptions(require.resolve('./changed-workflows'));
    const { workflowId, history } = load('a-buy-filled.account.json');
    const replay = Worker.runReplayHistory(options, historyFromJsonObject(history), workflowId);
    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
    await expect(replay).rejects.toThrow(/nondeterminism/i);
  });
});
