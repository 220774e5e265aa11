/** What every scenario gets from the orchestration (bench/orchestration.ts), and the figures they fill in. */
import type { InfraModule } from '../helpers';
import type { Options } from '../cli';
import type { CpuUsage } from '../cpu';
import type { FloorResult } from '../floor';
import type { LoadResult } from '../load';
import type { MemoryFigures } from '../memory';
import type { OneAtATime, OutcomeTally } from '../outcomes';
import type { Plan } from '../parameters';
import type { Stack } from '../stack';
import type { Summary } from '../stats';
import type { PersistenceUsage } from '../work-counters';
import type { BareFloorResult } from '../bare/floor';
import type { Redis } from 'ioredis';
import type { HttpFloor } from '../http-floor';
import type { BarCloseRun } from './bar-close';
import type { BusyBarClose } from './busy-bar-close';
import type { FanoutRun } from './fanout';
import type { WakeUpResult } from './wake-up';

export interface Context {
  stack: Stack;
  helpers: { infra: InfraModule };
  opts: Options;
  plan: Plan;
  results: Results;
  mark: (stage: string) => void;
  measure: <T>(stage: string, fn: () => Promise<T>, signalsOf?: (r: T) => number) => Promise<T>;
  drainMeasured: (stage: string, what: string, signals: number) => Promise<{ ms: number; deadlineMs: number }>;
  signalWorkflows: () => Promise<number>;
  unanswered: (stage: string, before: number, load: LoadResult) => Promise<void>;
  /** A connection of the bench's own to the stack's Redis, for its counters. */
  redisCounter: Redis;
  /** The bar close's floor server (bench/http-floor.ts), started the first time it is asked for. */
  httpFloor: () => Promise<HttpFloor>;
}

export interface Results {
  floor?: FloorResult & { drain?: { ms: number } };
  saturation?: LoadResult;
  half?: LoadResult;
  drains: Record<string, { ms: number }>;
  steady?: {
    load: LoadResult;
    poll: LoadResult;
    accepted: number;
    filled: number;
    notFilled: number;
    /** The fill wait hit its deadline: e2eMs covers only the signals filled by then. */
    incomplete: boolean;
    e2eMs: Summary;
    check: { sampled: number; filled: number; maxAbsOccurredVsLedgerMs: number | null };
    memory: Record<string, MemoryFigures>;
    /** Every accepted signal's outcome, read through the poll once the phase has drained. */
    outcomes?: OutcomeTally;
  };
  oneAtATime?: OneAtATime;
  overload?: { load: LoadResult; offeredRate: number; sustainedRate: number; outcomes: OutcomeTally };
  fanout?: { runs: FanoutRun[] };
  /** Scenario 9: the bare topology on the same server, per variant (eager start, search attributes). */
  bareFloor?: BareFloorResult;
  /** Scenarios 10, 12 and 13 by stage label. */
  barCloses: Record<string, BarCloseRun>;
  busyBarClose?: BusyBarClose;
  wakeUp?: WakeUpResult;
  /** Redis commands processed per stage (the 200 bridges' idle long-polls included) and per signal. */
  redisCommands: Record<string, { commands: number; perSignal: number | null }>;
  pollNoWorker?: LoadResult;
  loadavg: Record<string, number[]>;
  cpu: Record<string, CpuUsage>;
  /** Stages that did not complete. */
  errors: string[];
  /** Signal workflows started per phase against the 202s given. */
  startedVs202: Record<
    string,
    {
      started: number;
      answered202: number;
      answered503: number;
      pollable503: number;
      inFlightAtStop: number;
      startedDespite503AtLeast: number;
      startedDespiteRetryAtLeast: number;
    }
  >;
  /** Temporal dev server persistence calls per stage (from its metrics). */
  temporalPersistence: Record<string, PersistenceUsage>;
  /** Peak RSS (MB) of each program in each phase of the run (drains included). */
  memoryByPhase: Record<string, Record<string, number>>;
  /** RSS of the programs when ready and after the warm-up (MB). */
  memoryBaseline: Record<string, Record<string, { rssMb: number; hwmMb: number }>>;
}
