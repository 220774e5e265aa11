/**
 * The one Temporal dev-server profile of the project: `make start`, `make test`, the bench and docker-compose.yml all
 * start `temporal server start-dev` with exactly these flags (docker-compose.yml is checked against this list by
 * test/unit/temporal-profile.test.ts). docs/temporal-profile.md says why each is there, what it risks and what it
 * measured. `node dist/scripts/temporal-profile.js` prints the flags one per line, for scripts/start.sh.
 */

export interface ProfileSetting {
  /** The start-dev flag and its value. */
  flag: '--dynamic-config-value' | '--sqlite-pragma';
  value: string;
  /** Why it is set (what it saves), in a line. */
  why: string;
}

export const TEMPORAL_DEV_PROFILE: readonly ProfileSetting[] = [
  {
    flag: '--dynamic-config-value',
    value: 'system.forceSearchAttributesCacheRefreshOnRead=false',
    why: 'CLI 1.5.1 turns it on for the dev server: every request that touches search attributes re-reads cluster metadata from SQLite',
  },
  {
    flag: '--sqlite-pragma',
    value: 'journal_mode=wal',
    why: 'one append to the write-ahead log per commit instead of a rollback journal plus the database file',
  },
  {
    flag: '--sqlite-pragma',
    value: 'synchronous=normal',
    why: 'in WAL mode: fsync at checkpoints, not on every commit; a process crash loses nothing, a power loss the last commits',
  },
  {
    flag: '--dynamic-config-value',
    value: 'matching.numTaskqueueReadPartitions=1',
    why: 'one partition per task queue: a waiting poller always sees a new task (sync match, no task written to SQLite)',
  },
  {
    flag: '--dynamic-config-value',
    value: 'matching.numTaskqueueWritePartitions=1',
    why: 'as above, for the writing side',
  },
  {
    flag: '--dynamic-config-value',
    value: 'history.transferProcessorMaxPollRPS=1000',
    why: 'the dev server has one history shard; the default (20/s) caps how fast child starts and task dispatch are read back',
  },
  {
    flag: '--dynamic-config-value',
    value: 'history.timerProcessorMaxPollRPS=1000',
    why: 'as above, for timers (command expiry, idempotency windows)',
  },
  {
    flag: '--dynamic-config-value',
    value: 'history.visibilityProcessorMaxPollRPS=1000',
    why: 'as above, for the visibility records operators search (SignalId, AccountId, Outcome)',
  },
];

/**
 * The flags, in order, as start-dev takes them. `without` leaves out the settings whose value starts with it: the
 * bench uses it (TEMPORAL_DEV_PROFILE_WITHOUT) to measure what each setting is worth.
 */
export function temporalDevProfileArgs(without?: string): string[] {
  return TEMPORAL_DEV_PROFILE.filter((s) => !without || !s.value.startsWith(without)).flatMap((s) => [s.flag, s.value]);
}

/**
 * Candidate settings to measure on top of the profile before one joins it (docs/temporal-profile.md):
 * `key=value;pragma:name=value`, a `pragma:` entry a SQLite pragma, any other a dynamic-config value (whose keys are
 * all `area.name`). An entry that is neither is refused, never skipped: a candidate silently left out would be
 * measured as "no effect" while it never ran.
 */
export function temporalDevProfilePlusArgs(candidates: string | undefined): string[] {
  return (candidates ?? '')
    .split(';')
    .map((kv) => kv.trim())
    .filter((kv) => kv !== '')
    .flatMap((kv) => {
      const pragma = /^pragma:([a-zA-Z_]+=\S+)$/.exec(kv);
      if (pragma) return ['--sqlite-pragma', pragma[1]!];
      if (/^[a-zA-Z]+\.[a-zA-Z._]+=\S+$/.test(kv)) return ['--dynamic-config-value', kv];
      throw new Error(`TEMPORAL_DEV_PROFILE_PLUS: "${kv}" is neither area.name=value (dynamic config) nor pragma:name=value`);
    });
}

if (require.main === module) {
  process.stdout.write(`${temporalDevProfileArgs().join('\n')}\n`);
}
