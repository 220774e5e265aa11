import { setTimeout as delay } from 'node:timers/promises';
import { runInThisContext } from 'node:vm';

/**
 * Child processes in their own process group, under a bash wrapper whose watchdog kills the group when this process
 * dies (even by SIGKILL: the wrapper sees its stdin close). Shared by infra.ts (servers) and processes.ts (our programs).
 */

export const WRAPPER = `
exec 3<&0
"$@" </dev/null 3<&- &
child=$!
( while read -r _; do :; done <&3; trap '' TERM; kill -TERM 0; sleep 10; kill -KILL 0 ) &
watchdog=$!
exec 3<&-
trap ':' TERM INT HUP
while :; do
  wait "$child"; status=$?
  kill -0 "$child" 2>/dev/null || break
done
kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
exit "$status"
`;

/**
 * This process's real `process`. Inside a jest test file, the global `process` is a per-file copy whose 'exit' event
 * never fires; the main context still holds the real one.
 */
const realProcess: NodeJS.Process = runInThisContext('process');

/** Process groups this process started and has not seen die; killed outright if this process exits first. */
const liveGroups = new Set<number>();
function killLiveGroups(): void {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  liveGroups.clear();
}
export function track(pgid: number): void {
  if (liveGroups.size === 0) realProcess.on('exit', killLiveGroups);
  liveGroups.add(pgid);
}
export function untrack(pgid: number): void {
  liveGroups.delete(pgid);
  if (liveGroups.size === 0) realProcess.removeListener('exit', killLiveGroups);
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Ends a process group: `first` to the group; after SIGTERM, SIGKILL once `graceMs` has passed or if anything of the
 * group outlived its leader. Resolves with how the leader exited.
 */
export async function terminateGroup<T>(pgid: number, exited: Promise<T>, first: 'SIGTERM' | 'SIGINT' | 'SIGKILL', graceMs: number): Promise<T> {
  try {
    process.kill(-pgid, first);
  } catch {
    // group already gone
  }
  if (first !== 'SIGKILL') {
    const ac = new AbortController();
    const graceful = await Promise.race([exited.then(() => true), delay(graceMs, false, { signal: ac.signal }).catch(() => false)]).finally(() => ac.abort());
    if (!graceful || groupAlive(pgid)) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
  return exited;
}
