import { setMaxListeners } from 'node:events';
import type { BridgeCommand } from '../domain/bridge-protocol';
import type { CommandQueue } from './queue';

/** What one long-poll of a multi-account session brought: each account's commands, and which were superseded. */
export interface SessionPoll {
  commands: Map<string, BridgeCommand[]>;
  superseded: string[];
}

/**
 * One long-poll over many accounts' queues (protocol 1.7): each account waits as its own long-poll would (so the
 * newest poll of an account still wins, whether a session's or a single bridge's), and the first account to get
 * commands ends the wait for all. Every command taken on the way out is answered: an account's take that was already
 * under way when the wait ended still answers what it took, so nothing is marked delivered and left unanswered.
 */
export async function takeOrWaitMany(
  queue: CommandQueue,
  accountIds: readonly string[],
  limit: number,
  waitMs: number,
  signal: AbortSignal,
): Promise<SessionPoll> {
  const ended = new AbortController();
  // One listener per account on this poll's own signal (up to MAX_SESSION_ACCOUNTS): not a leak.
  setMaxListeners(accountIds.length + 10, ended.signal);
  const end = () => ended.abort();
  signal.addEventListener('abort', end);
  try {
    const polls = accountIds.map(async (id) => {
      const taken = await queue.takeOrWait(id, limit, waitMs, ended.signal);
      if (taken.commands.length > 0) end();
      return taken;
    });
    const results = await Promise.all(polls);
    const commands = new Map<string, BridgeCommand[]>();
    const superseded: string[] = [];
    results.forEach((r, i) => {
      if (r.commands.length > 0) commands.set(accountIds[i]!, r.commands);
      if (r.superseded) superseded.push(accountIds[i]!);
    });
    return { commands, superseded };
  } finally {
    signal.removeEventListener('abort', end);
  }
}
