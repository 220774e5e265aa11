/** The table's rows of the bar closes (scenarios 10, 12, 13 and 14), each figure beside its goal and the floor's. */
import type { Options } from './cli';
import { BAR_CLOSE_LARGE, BAR_CLOSE_STRATEGIES, BUSY_RATE, GOALS } from './parameters';
import { goalRow, infoRow, round, type Row } from './stats';
import type { BarCloseRound, BarCloseRun } from './scenarios/bar-close';
import type { Results } from './scenarios/context';

const others = (answered: Record<string, number>) =>
  Object.entries(answered)
    .filter(([k]) => k !== '202')
    .map(([k, v]) => `${v} × ${k}`)
    .join(', ');

const refused = (r: BarCloseRound) => r.posts - (r.answered['202'] ?? 0);

/** The last fill after its alert, against `limitMs`. */
function lastFill(name: string, what: string, r: BarCloseRound | undefined, limitMs: number): Row {
  const note = r ? `p50 ${r.fillMs.p50} p99 ${r.fillMs.p99} ms; ${r.filled} of ${r.accepted} filled; 202 → fill max ${r.answerToFillMs.max} ms` : undefined;
  return goalRow(name, `${what}: alert → fill, the last one`, r?.fillMs.max ?? null, 'ms', '<=', limitMs, undefined, note);
}

/** A bar close of 100: every post 202, the last answer and the last fill. */
function rows100(name: string, what: string, r: BarCloseRound | undefined, posts: number): Row[] {
  return [
    goalRow(
      name,
      `${what}: answered 202`,
      r ? (r.answered['202'] ?? 0) : null,
      '',
      '>=',
      posts,
      `${posts}`,
      r && refused(r) ? `others: ${others(r.answered)}` : undefined,
    ),
    goalRow(
      name,
      `${what}: the instant → the last answer`,
      r?.lastAnswerMs ?? null,
      'ms',
      '<=',
      GOALS.barClose100LastAnswerMs,
      undefined,
      r ? `alert → answer p50 ${r.answerMs.p50} p99 ${r.answerMs.p99} max ${r.answerMs.max} ms; ${r.answeredAfter3s} after 3 s` : undefined,
    ),
    lastFill(name, what, r, GOALS.barClose100LastFillMs),
  ];
}

/** A bar close of 1,000: none refused, every answer within 1.5 s, none past 3 s, every fill within 2 s. */
function rows1000(name: string, what: string, r: BarCloseRound | undefined): Row[] {
  return [
    goalRow(name, `${what}: refused (not 202)`, r ? refused(r) : null, '', '<=', 0, '0', r ? `${r.posts} posts: ${JSON.stringify(r.answered)}` : undefined),
    goalRow(
      name,
      `${what}: alert → answer, the slowest`,
      r?.answerMs.max ?? null,
      'ms',
      '<=',
      GOALS.barClose1000MaxAnswerMs,
      undefined,
      r ? `p50 ${r.answerMs.p50} p99 ${r.answerMs.p99} ms; the instant → the last answer ${r.lastAnswerMs} ms` : undefined,
    ),
    goalRow(name, `${what}: answers after 3 s`, r?.answeredAfter3s ?? null, '', '<=', 0, '0'),
    lastFill(name, what, r, GOALS.barClose1000MaxFillMs),
  ];
}

/** Ours ÷ the floor for the last answer and the p50 answer of each round; CPU; the work per accepted signal. */
function besideTheFloor(name: string, b: BarCloseRun | undefined, r: Results): Row[] {
  const rows: Row[] = [];
  const ratio = (ours: number | null | undefined, floor: number | null | undefined) => (ours != null && floor ? round(ours / floor, 2) : null);
  (b?.rounds ?? [undefined]).forEach((o, i) => {
    const f = b?.floor?.rounds[Math.min(i, (b.floor.rounds.length || 1) - 1)];
    const when = i === 0 ? '' : ', again';
    rows.push(
      goalRow(
        name,
        `ours ÷ floor: the last answer${when}`,
        ratio(o?.lastAnswerMs, f?.lastAnswerMs),
        '×',
        '<=',
        GOALS.barCloseVsFloor,
        undefined,
        o && f ? `ours ${o.lastAnswerMs} ms, floor ${f.lastAnswerMs} ms (floor answers ${JSON.stringify(f.answered)})` : undefined,
      ),
      goalRow(
        name,
        `ours ÷ floor: alert → answer p50${when}`,
        ratio(o?.answerMs.p50, f?.answerMs.p50),
        '×',
        '<=',
        GOALS.barCloseVsFloor,
        undefined,
        o && f ? `ours ${o.answerMs.p50} ms, floor ${f.answerMs.p50} ms` : undefined,
      ),
    );
  });
  const floorCpu = b?.floor?.cpuMsPerRequest;
  rows.push(
    goalRow(
      name,
      'ingress CPU per accepted ÷ floor CPU per request',
      b?.ingressCpuMsPerAccepted != null && floorCpu ? round(b.ingressCpuMsPerAccepted / floorCpu, 2) : null,
      '×',
      '<=',
      GOALS.barCloseCpuVsFloor,
      undefined,
      b ? `ours ${b.ingressCpuMsPerAccepted} ms (less its idle rate), floor ${floorCpu ?? '—'} ms (${b.floor?.writeBytes ?? '—'} B written each)` : undefined,
    ),
  );
  const redis = b?.redis;
  rows.push(
    goalRow(
      name,
      'Redis commands per accepted signal (signal path)',
      redis?.perAccepted ?? null,
      '',
      '<=',
      GOALS.barCloseRedisPerSignal,
      undefined,
      redis
        ? `${redis.signalPath} of ${redis.total} in the window, idle rates taken off; ${redis.byCommand
            .slice(0, 5)
            .map((c) => `${c.command} ${c.calls}`)
            .join(', ')}`
        : undefined,
    ),
  );
  const stages = b ? [b.label, `drain after ${b.label}`] : [];
  const accepted = b?.signals ?? 0;
  const calls = stages.every((st) => r.temporalPersistence[st]) && accepted > 0 ? stages.reduce((s, st) => s + r.temporalPersistence[st]!.calls, 0) : null;
  rows.push(
    infoRow(
      name,
      'Temporal persistence calls per accepted signal',
      calls !== null ? round(calls / accepted, 1) : null,
      '',
      b
        ? `the rounds and their drain; history events of one alert: signal ${b.historyEvents?.signal ?? '—'}, account ${b.historyEvents?.account ?? '—'}; outcomes ${JSON.stringify(b.outcomes ?? null)}`
        : undefined,
    ),
  );
  return rows;
}

export function barCloseRows(r: Results, opts: Options): Row[] {
  const rows: Row[] = [];
  const want = (n: number) => opts.scenarios.has(n);
  if (want(10)) {
    const b = r.barCloses['barClose'];
    rows.push(...rows100('10 bar close', `${opts.barClose} accounts`, b?.rounds[0], opts.barClose));
    rows.push(...rows100('10 bar close', 'again 5 s later', b?.rounds[1], opts.barClose), ...besideTheFloor('10 bar close', b, r));
  }
  for (const [n, label, what] of [
    [12, 'barClose1000', `${BAR_CLOSE_LARGE} accounts`],
    [13, 'barCloseStrategies', `${BAR_CLOSE_STRATEGIES} × 100 accounts`],
  ] as const) {
    if (!want(n)) continue;
    const b = r.barCloses[label];
    const name = `${n} bar close`;
    rows.push(...rows1000(name, what, b?.rounds[0]), ...rows1000(name, 'again 5 s later', b?.rounds[1]), ...besideTheFloor(name, b, r));
  }
  if (want(14)) {
    const x = r.busyBarClose;
    const busy = x?.busy;
    const name = '14 busy, bar close';
    rows.push(
      goalRow(
        name,
        `busy ${BUSY_RATE}/s: accepted of offered`,
        busy ? round(busy.accepted / busy.offered, 3) : null,
        '',
        '>=',
        GOALS.busyAcceptedRatio,
        undefined,
        busy
          ? `${busy.accepted} of ${busy.offered}; ${JSON.stringify(busy.load.statusCounts)}, errors ${busy.load.errors}, timeouts ${busy.load.timeouts}`
          : undefined,
      ),
      goalRow(name, 'busy: accepted not filled', busy?.notFilled ?? null, '', '<=', 0, '0', busy ? `outcomes ${JSON.stringify(busy.outcomes)}` : undefined),
      goalRow(
        name,
        'busy: alert → fill p99',
        busy?.fillMs.p99 ?? null,
        'ms',
        '<=',
        GOALS.busyFillP99Ms,
        undefined,
        busy ? `p50 ${busy.fillMs.p50} max ${busy.fillMs.max} ms` : undefined,
      ),
    );
    const b = x?.barClose.rounds[0];
    rows.push(
      goalRow(
        name,
        'bar close of 100 right after: refused',
        b ? refused(b) : null,
        '',
        '<=',
        0,
        '0',
        x && b ? `${JSON.stringify(b.answered)}; its instant ${x.gapMs} ms after the busy load's end` : undefined,
      ),
      ...rows100(name, 'bar close of 100 right after', b, 100).slice(1),
      ...besideTheFloor(name, x?.barClose, r),
    );
  }
  return rows;
}
