/** The table printed at the end: one row per figure, against its goal where it has one. */
import os from 'node:os';
import type { Options } from './cli';
import { ACCOUNTS, BROADCAST_SMALL, CONCURRENCY, GOALS, STEADY_ACCOUNTS } from './parameters';
import { goalRow, infoRow, round, type Row } from './stats';
import { barCloseRows } from './table-bar-close';
import type { Results } from './scenarios/context';

export function rowsOf(r: Results, opts: Options): Row[] {
  const rows: Row[] = [];
  const want = (n: number) => opts.scenarios.has(n);
  if (want(1)) {
    const f = r.floor;
    rows.push(infoRow('1 floor', `starts/s (concurrency ${CONCURRENCY})`, f ? round(f.startsPerSec, 1) : null, '/s'));
    rows.push(infoRow('1 floor', 'start latency p50', f?.startLatencyMs.p50 ?? null, 'ms'));
    rows.push(infoRow('1 floor', 'start latency p99', f?.startLatencyMs.p99 ?? null, 'ms'));
  }
  if (want(2)) {
    const s = r.saturation;
    const h = r.half;
    const non202 = s ? s.requests - (s.statusCounts['202'] ?? 0) + s.errors + s.timeouts : null;
    rows.push(
      infoRow('2 ingress', `accepted/s at saturation (${CONCURRENCY} conns)`, s ? round(s.okPerSec, 1) : null, '/s', non202 ? `${non202} not 202` : undefined),
    );
    const ratio = s && r.floor ? round(s.okPerSec / r.floor.startsPerSec, 3) : null;
    rows.push(
      goalRow('2 ingress', 'ingress / floor', ratio, '', '>=', GOALS.ingressVsFloor, `≥ ${GOALS.ingressVsFloor}`, r.floor ? undefined : 'needs scenario 1'),
    );
    rows.push(infoRow('2 ingress', 'accept p50 at saturation', s?.okLatencyMs.p50 ?? null, 'ms'));
    rows.push(infoRow('2 ingress', 'accept p99 at saturation', s?.okLatencyMs.p99 ?? null, 'ms'));
    const halfNon202 = h ? h.requests - (h.statusCounts['202'] ?? 0) + h.errors + h.timeouts : null;
    rows.push(
      infoRow(
        '2 ingress',
        `accept p50 at half rate (${h?.targetRate ?? '—'}/s)`,
        h?.okLatencyMs.p50 ?? null,
        'ms',
        halfNon202 ? `${halfNon202} not 202` : undefined,
      ),
    );
    rows.push(goalRow('2 ingress', 'accept p99 at half rate', h?.okLatencyMs.p99 ?? null, 'ms', '<=', GOALS.acceptP99HalfMs));
  }
  if (want(7)) {
    const o = r.oneAtATime;
    rows.push(
      goalRow(
        '7 one at a time',
        '202 → filled p50',
        o?.filledMs.p50 ?? null,
        'ms',
        '<=',
        GOALS.oneFilledP50Ms,
        undefined,
        o ? `p99 ${o.filledMs.p99} ms over ${o.signals}` : undefined,
      ),
    );
    rows.push(
      goalRow(
        '7 one at a time',
        '202 → visible to the poll p50',
        o?.visibleMs.p50 ?? null,
        'ms',
        '<=',
        GOALS.oneVisibleP50Ms,
        undefined,
        o ? `p99 ${o.visibleMs.p99} ms` : undefined,
      ),
    );
    rows.push(infoRow('7 one at a time', 'POST sent → filled p50', o?.sentToFilledMs.p50 ?? null, 'ms', o ? `p99 ${o.sentToFilledMs.p99} ms` : undefined));
    rows.push(infoRow('7 one at a time', 'POST sent → 202 p50', o?.answerMs.p50 ?? null, 'ms', o ? `p99 ${o.answerMs.p99} ms` : undefined));
  }
  if (want(3)) {
    const st = r.steady;
    // Offered is what the paced load was asked to send; a slow ingress makes it send fewer, and that counts against it.
    const offered = st ? Math.max(Math.round((st.load.targetRate ?? 0) * st.load.durationSec), st.load.requests + st.load.errors + st.load.timeouts) : 0;
    const ratio = st && offered > 0 ? round(st.accepted / offered, 3) : null;
    const out = st?.outcomes;
    const expired = out ? (out.rejected['signal_expired'] ?? 0) : null;
    const note = st ? `${st.accepted} of ${offered} accepted; ${st.load.statusCounts['503'] ?? 0} got 503` : undefined;
    rows.push(
      goalRow(
        '3 end to end',
        `accepted of offered (${opts.steadyRate}/s, ${STEADY_ACCOUNTS} accts)`,
        ratio,
        '',
        '>=',
        GOALS.steadyAcceptedRatio,
        undefined,
        note,
      ),
    );
    rows.push(
      goalRow(
        '3 end to end',
        'accepted not filled (expired, unreported, rejected)',
        out ? out.signals - out.filled : null,
        '',
        '<=',
        0,
        '0',
        out ? `expired ${expired}, unreported ${out.unreported}, rejected ${JSON.stringify(out.rejected)}` : undefined,
      ),
    );
    rows.push(infoRow('3 end to end', '202 → filled p50', st?.e2eMs.p50 ?? null, 'ms'));
    rows.push(goalRow('3 end to end', '202 → filled p99', st?.e2eMs.p99 ?? null, 'ms', '<=', GOALS.e2eP99Ms));
  }
  if (want(8)) {
    const o = r.overload;
    const note = o
      ? `offered ${o.offeredRate}/s (2 × ${o.sustainedRate}/s): ${o.load.statusCounts['202'] ?? 0} × 202, ${o.load.statusCounts['503'] ?? 0} × 503`
      : undefined;
    rows.push(goalRow('8 overload', '503 answered within (p99)', o?.load.refusedLatencyMs?.p99 ?? null, 'ms', '<=', GOALS.refusedP99Ms, undefined, note));
    const expired = o ? (o.outcomes.rejected['signal_expired'] ?? 0) : null;
    rows.push(
      goalRow(
        '8 overload',
        'accepted signals expired',
        expired,
        '',
        '<=',
        0,
        '0',
        o ? `${o.outcomes.filled} of ${o.outcomes.signals} filled, unreported ${o.outcomes.unreported}` : undefined,
      ),
    );
  }
  if (want(9)) rows.push(...bareFloorRows(r));
  rows.push(...barCloseRows(r, opts));
  if (want(11)) {
    const w = r.wakeUp;
    rows.push(
      infoRow(
        '11 wake-up',
        "enqueue → command in the bridge's hands p50",
        w?.wakeUpMs.p50 ?? null,
        'ms',
        w ? `p99 ${w.wakeUpMs.p99} ms over ${w.rounds}; the enqueue alone p50 ${w.enqueueMs.p50} ms` : undefined,
      ),
    );
  }
  if (want(4)) {
    const small = (r.fanout?.runs ?? []).find((x) => x.accounts === BROADCAST_SMALL);
    rows.push(
      goalRow(
        '4 fan-out',
        `broadcast to ${BROADCAST_SMALL}: 202 → all outcomes visible to the poll`,
        small?.observedMs ?? null,
        'ms',
        '<=',
        GOALS.broadcastVisibleMs,
        undefined,
        small ? `max occurredAt ${small.allReportedMs} ms; polled every 100 ms; ${small.filled} filled` : undefined,
      ),
    );
    const runs = (r.fanout?.runs ?? []).filter((x) => x.accounts === ACCOUNTS);
    rows.push(
      goalRow(
        '4 fan-out',
        `broadcast to ${ACCOUNTS}: 202 → all outcomes visible to the poll (worst)`,
        runs.length ? Math.max(...runs.map((x) => x.observedMs)) : null,
        'ms',
        '<=',
        GOALS.broadcastVisibleMs,
      ),
    );
    const worst = runs.length ? Math.max(...runs.map((x) => x.allReportedMs)) : null;
    const note = runs.length
      ? `${runs.length === 1 ? 'one run' : `worst of ${runs.length}: ${runs.map((x) => x.allReportedMs).join(', ')} ms`}; ${runs.map((x) => x.filled).join('/')} filled`
      : undefined;
    rows.push(goalRow('4 fan-out', `202 → all ${ACCOUNTS} outcomes (max occurredAt)`, worst, 'ms', '<=', GOALS.fanoutMs, undefined, note));
  }
  if (want(5)) {
    const p = r.steady?.poll;
    const q = r.pollNoWorker;
    rows.push(infoRow('5 poll', `p50 under scenario 3 (${opts.pollRate}/s)`, p?.okLatencyMs.p50 ?? null, 'ms'));
    rows.push(goalRow('5 poll', 'p99 under scenario 3', p?.okLatencyMs.p99 ?? null, 'ms', '<=', GOALS.pollP99Ms));
    rows.push(infoRow('5 poll', 'p50, worker stopped', q?.okLatencyMs.p50 ?? null, 'ms'));
    rows.push(goalRow('5 poll', 'p99, worker stopped', q?.okLatencyMs.p99 ?? null, 'ms', '<=', GOALS.pollP99Ms));
  }
  if (want(6)) {
    const m = r.steady?.memory;
    rows.push(
      goalRow(
        '6 memory',
        'ingress peak RSS (scenario 3)',
        m?.ingress?.peakRssMb ?? null,
        'MB',
        '<=',
        GOALS.ingressRssMb,
        undefined,
        m?.ingress ? `VmHWM ${m.ingress.hwmMb} MB` : undefined,
      ),
    );
    const u = r.cpu['steady'];
    const cpuMsPer202 =
      u && r.steady && r.steady.accepted > 0 ? round(((u.byProgram['ingress'] ?? 0) * u.seconds * 1000) / (r.steady.load.requests || 1), 2) : null;
    rows.push(
      infoRow(
        '6 memory',
        'ingress CPU per request (scenario 3)',
        cpuMsPer202,
        'ms',
        u
          ? `ingress ${u.byProgram['ingress'] ?? 0} cores over ${u.seconds} s, ${r.steady?.load.requests ?? 0} webhook requests and the polls beside them`
          : undefined,
      ),
    );
    rows.push(
      goalRow(
        '6 memory',
        'worker peak RSS (scenario 3)',
        m?.worker?.peakRssMb ?? null,
        'MB',
        '<=',
        GOALS.workerRssMb,
        undefined,
        m?.worker ? `VmHWM ${m.worker.hwmMb} MB` : undefined,
      ),
    );
  }
  // The machine is shared: what other processes used while each stage ran.
  for (const [stage, label] of [
    ['floor', '1'],
    ['saturation', '2 saturation'],
    ['half', '2 half rate'],
    ['steady', '3/5/6 steady'],
    ['fanout1', '4 fan-out'],
    ['pollNoWorker', '5 no worker'],
    ['oneAtATime', '7 one at a time'],
    ['overload', '8 overload'],
    ['bareFloor', '9 bare topology'],
    [`fanout${BROADCAST_SMALL}`, `4 fan-out to ${BROADCAST_SMALL}`],
    ['barClose', '10 bar close'],
    ['barClose1000', '12 bar close of 1,000'],
    ['barCloseStrategies', '13 bar close, 10 × 100'],
    ['busyBarClose', '14 busy, then a bar close'],
    ['wakeUp', '11 wake-up'],
  ] as const) {
    const u = r.cpu[stage];
    if (u)
      rows.push(
        infoRow(
          '· machine',
          `CPU of other processes during ${label}`,
          u.others,
          'cores',
          `machine busy ${u.machine} of ${os.cpus().length}; ours: ${Object.entries(u.byProgram)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}, load ${u.benchAndLoad}`,
        ),
      );
  }
  // Work counted beside the latencies: Redis commands per signal where a stage counts its signals.
  for (const [stage, c] of Object.entries(r.redisCommands)) {
    if (c.perSignal !== null && !stage.startsWith('drain'))
      rows.push(infoRow('· work', `Redis commands per signal, ${stage}`, c.perSignal, '', `${c.commands} in the stage`));
  }
  return rows;
}

/**
 * Scenario 9 against ours: sustained rate (ours: the 202s of scenario 2's saturation over that phase and its drain,
 * i.e. until Temporal had done all of it; the bare one: closed loops that each wait for their signal to complete) and
 * one-at-a-time latency (ours from scenario 7), and the work per signal of each.
 */
function bareFloorRows(r: Results): Row[] {
  const rows: Row[] = [];
  const variant = (name: string) => r.bareFloor?.variants.find((v) => v.name === name);
  const plain = variant('plain');
  const sat = r.saturation;
  const satDrain = r.drains['saturation'];
  const oursPerSec = sat && satDrain ? round((sat.statusCounts['202'] ?? 0) / (sat.durationSec + satDrain.ms / 1000), 2) : null;
  rows.push(
    infoRow(
      '9 bare floor',
      `completed/s, ${plain?.sustained.concurrency ?? CONCURRENCY} closed loops`,
      plain?.sustained.perSec ?? null,
      '/s',
      plain ? `complete p50 ${plain.sustained.completeMs.p50} ms, p99 ${plain.sustained.completeMs.p99} ms` : undefined,
    ),
  );
  rows.push(
    infoRow(
      '9 bare floor',
      'ours ÷ bare: sustained rate',
      oursPerSec !== null && plain ? round(oursPerSec / plain.sustained.perSec, 3) : null,
      '',
      oursPerSec !== null
        ? `ours ${oursPerSec}/s (scenario 2's 202s over its ${sat!.durationSec} s and ${round(satDrain!.ms / 1000, 1)} s drain)`
        : 'needs scenario 2',
    ),
  );
  const one = r.oneAtATime;
  rows.push(
    infoRow(
      '9 bare floor',
      'one at a time: start → handed out p50',
      plain?.one.handOutMs.p50 ?? null,
      'ms',
      plain ? `start itself p50 ${plain.one.startMs.p50} ms; → complete p50 ${plain.one.completeMs.p50} ms` : undefined,
    ),
  );
  rows.push(
    infoRow(
      '9 bare floor',
      'ours ÷ bare: 202 → filled p50 over start → handed out p50',
      one && plain?.one.handOutMs.p50 ? round(one.filledMs.p50! / plain.one.handOutMs.p50, 2) : null,
      '',
      one ? `ours ${one.filledMs.p50} ms (scenario 7; includes the bridge's wake-up and the fill)` : 'needs scenario 7',
    ),
  );
  rows.push(
    infoRow(
      '9 bare floor',
      'ours ÷ bare: 202 → visible p50 over start → complete p50',
      one && plain?.one.completeMs.p50 ? round(one.visibleMs.p50! / plain.one.completeMs.p50, 2) : null,
      '',
      one ? `ours ${one.visibleMs.p50} ms` : 'needs scenario 7',
    ),
  );
  // Work per signal, sustained on both sides: ours over scenario 2's saturation and its drain (all of its signals' work).
  const accepted = sat?.statusCounts['202'] ?? 0;
  const stages = ['saturation', 'drain after saturation'];
  const oursCalls =
    accepted > 0 && stages.every((st) => r.temporalPersistence[st])
      ? round(stages.reduce((sum, st) => sum + r.temporalPersistence[st]!.calls, 0) / accepted, 1)
      : null;
  const oursCpu =
    accepted > 0 && stages.every((st) => r.cpu[st])
      ? round(stages.reduce((sum, st) => sum + (r.cpu[st]!.byProgram['temporal'] ?? 0) * r.cpu[st]!.seconds * 1000, 0) / accepted, 1)
      : null;
  rows.push(
    infoRow(
      '9 bare floor',
      'Temporal persistence calls per signal, bare (sustained)',
      plain?.sustained.persistence?.callsPerSignal ?? null,
      '',
      `ours ${oursCalls ?? '—'} (scenario 2 and its drain; one at a time ${r.temporalPersistence['oneAtATime']?.callsPerSignal ?? '—'}); Temporal CPU per signal bare ${plain?.sustained.temporalCpuMsPerSignal ?? '—'} ms, ours ${oursCpu ?? '—'} ms; history events bare ${plain?.history ? `${plain.history.parentEvents} + ${plain.history.childEvents}` : '—'}`,
    ),
  );
  for (const name of ['eager', 'upsert']) {
    const v = variant(name);
    const what = name === 'eager' ? 'eager start' : 'search attributes upserted, not at start';
    rows.push(
      infoRow(
        '9 bare floor',
        `${what}: start → complete p50, one at a time`,
        v?.one.completeMs.p50 ?? null,
        'ms',
        v && plain
          ? `plain ${plain.one.completeMs.p50} ms; start p50 ${v.one.startMs.p50} vs ${plain.one.startMs.p50} ms; ${v.one.eagerlyStarted} of ${v.one.signals} eager; sustained ${v.sustained.perSec} vs ${plain.sustained.perSec}/s; calls/signal ${v.sustained.persistence?.callsPerSignal ?? '—'} vs ${plain.sustained.persistence?.callsPerSignal ?? '—'}; ${v.sustained.eagerlyStarted} of ${v.sustained.signals} eager sustained`
          : undefined,
      ),
    );
  }
  return rows;
}
