/** The bench's fixed parameters, its two plans (full and --quick) and the goals its table checks. */
export const ACCOUNTS = 200;
export const CONCURRENCY = 50;
export const STEADY_RATE = 40;
export const STEADY_ACCOUNTS = 100;
export const POLL_RATE = 100;
/** The smaller broadcast's accounts (the first of the 200; scenario 4) and the bar close's default (scenario 10). */
export const BROADCAST_SMALL = 100;
export const BAR_CLOSE_ACCOUNTS = 100;
/** Scenario 12: a bar close of this many accounts, all served by the one paper bridge (the registry grows to it). */
export const BAR_CLOSE_LARGE = 1000;
/** Scenario 13: ten strategies on each of 100 accounts fire at once (1,000 alerts). */
export const BAR_CLOSE_STRATEGIES = 10;
/** Scenario 14's busy phase (alerts/s over STEADY_ACCOUNTS accounts). */
export const BUSY_RATE = 40;
export const LIMIT_RAISED = '1000000000';
/** RATE_LIMIT_SCALE for the run: every per-caller limit (the smallest is 60 in 10 s) past LIMIT_RAISED too. */
export const LIMIT_SCALE = '20000000';
export const MAX_SIGNAL_AGE_MS = 30_000; // the ingress's COMMAND_AGES.marketEntryMs (src/domain/limits.ts)

export const PLANS = {
  full: {
    floorSec: 20,
    saturationSec: 20,
    halfSec: 20,
    steadySec: 60,
    pollNoWorkerSec: 20,
    fanoutRuns: 3,
    oneAtATime: 100,
    overloadSec: 30,
    bareSec: 20,
    bareOneAtATime: 100,
    wakeUps: 100,
    busySec: 20,
  },
  quick: {
    floorSec: 5,
    saturationSec: 5,
    halfSec: 5,
    steadySec: 15,
    pollNoWorkerSec: 5,
    fanoutRuns: 1,
    oneAtATime: 30,
    overloadSec: 10,
    bareSec: 5,
    bareOneAtATime: 30,
    wakeUps: 30,
    busySec: 5,
  },
};
export type Plan = (typeof PLANS)['full'];

export const GOALS = {
  ingressVsFloor: 0.85,
  acceptP99HalfMs: 50,
  /** Issue 28's (issue 11's were 40 and 60). */
  oneFilledP50Ms: 15,
  oneVisibleP50Ms: 40,
  steadyAcceptedRatio: 0.9,
  e2eP99Ms: 300,
  refusedP99Ms: 50,
  fanoutMs: 3000,
  /** Issue 28: a broadcast's outcomes all visible within 1 s. */
  broadcastVisibleMs: 1000,
  /** Item 7, "the bench measures what a trader feels": a bar close of 100 (scenario 10; scenario 14's after the busy phase). */
  barClose100LastAnswerMs: 200,
  barClose100LastFillMs: 300,
  /** A bar close of 1,000 (scenarios 12 and 13): 0 refused, every answer within 1.5 s, none past 3 s, every fill within 2 s. */
  barClose1000MaxAnswerMs: 1500,
  barClose1000MaxFillMs: 2000,
  /** Scenario 14's busy phase. */
  busyAcceptedRatio: 0.99,
  busyFillP99Ms: 100,
  /** Each bar-close figure (last answer, p50 answer) within this many times the floor's, same run, same client. */
  barCloseVsFloor: 4,
  /** The ingress's CPU per accepted signal within this many times the floor server's per request. */
  barCloseCpuVsFloor: 3,
  barCloseRedisPerSignal: 60,
  pollP99Ms: 20,
  ingressRssMb: 200,
  workerRssMb: 400,
};
