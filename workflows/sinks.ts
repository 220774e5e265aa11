import type { Sinks } from '@temporalio/workflow';

/** What workflows tell the worker process (metrics): fire-and-forget, never replayed, never in history. */
export interface OutcomeSinks extends Sinks {
  outcomes: {
    record(outcome: string, reason: string | null, action: string, platform: string): void;
  };
}
