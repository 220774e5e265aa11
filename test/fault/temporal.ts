/**
 * The fault suite's look into Temporal: executions by visibility query, and a diagnosis for failure messages. The
 * client itself is test/helpers/temporal.ts.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** Every execution matching a visibility query (e.g. `TaskQueue = "q" AND WorkflowType = "accountWorkflow"`). */
export async function listExecutions(client: Client, query: string): Promise<{ workflowId: string; status: string; type: string }[]> {
  const out: { workflowId: string; status: string; type: string }[] = [];
  for await (const wf of client.workflow.list({ query })) out.push({ workflowId: wf.workflowId, status: wf.status.name, type: wf.type });
  return out;
}

/** For failure messages: who polls the task queue, and where a few executions stand (status, last events, pending activities). */
export async function temporalDiagnosis(client: Client, taskQueue: string, workflowIds: readonly string[]): Promise<string> {
  const lines: string[] = [];
  try {
    const { TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY } = temporal.api.enums.v1.TaskQueueType;
    for (const [type, name] of [
      [TASK_QUEUE_TYPE_WORKFLOW, 'workflow'],
      [TASK_QUEUE_TYPE_ACTIVITY, 'activity'],
    ] as const) {
      const d = await client.workflowService.describeTaskQueue({ namespace: client.options.namespace, taskQueue: { name: taskQueue }, taskQueueType: type });
      lines.push(
        `${name} pollers on ${taskQueue}: ${(d.pollers ?? []).map((p) => `${p.identity} (last ${String(p.lastAccessTime?.seconds)})`).join(', ') || 'none'}`,
      );
    }
    for (const workflowId of workflowIds.slice(0, 3)) {
      const handle = client.workflow.getHandle(workflowId);
      const d = await handle.describe();
      const raw = d.raw as {
        pendingActivities?: { activityType?: { name?: string }; attempt?: number; lastFailure?: { message?: string } }[];
        pendingWorkflowTask?: { state?: unknown; attempt?: number };
      };
      const history = await handle.fetchHistory();
      const events = (history.events ?? []).slice(-6).map((e) => String(e.eventType));
      lines.push(
        `${workflowId}: ${d.status.name}, ${history.events?.length} events, last ${events.join(' > ')}; pending activities ` +
          `${JSON.stringify((raw.pendingActivities ?? []).map((a) => [a.activityType?.name, a.attempt, a.lastFailure?.message]))}; pending workflow task ${JSON.stringify(raw.pendingWorkflowTask ?? null)}`,
      );
    }
  } catch (err) {
    lines.push(`(diagnosis failed: ${(err as Error).message})`);
  }
  return lines.join('\n');
}
