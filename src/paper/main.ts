import fs from 'node:fs';
import { z } from 'zod';
import type { Platform } from './broker';
import { FileJournal, MemoryJournal } from './journal';
import { FileLedger, journalFileFor, managementFileFor, MemoryLedger, stateFileFor, tradesFileFor } from './ledger';
import { FileMarket } from './market-file';
import { DEFAULT_BRIDGE_VERSIONS, PaperTerminal } from './terminal';
import { parseFaults, type Fault } from './faults';
import { BridgeFleet } from '../bridge-kit/fleet';

/**
 * The paper bridge (docs/paper-bridge.md): one simulated terminal per account of a registry document that has a
 * bridge token, all of them speaking to the ingress on multi-account sessions (src/bridge-kit/fleet.ts) over a fixed
 * number of connections.
 *
 *   npm run paper-bridge -- --registry FILE [--ledger FILE.jsonl] [--ingress URL] [--platform-version mt5=2.1.0,ctrader=1.2.0]
 *
 * stdout: one JSON line per handled command. stderr: JSON lines of connection and market events.
 */

const USAGE = `usage: paper-bridge --registry FILE [options]

  --registry FILE            registry import document ({accounts:[{id, platform, bridgeToken}]}); required
  --ledger FILE.jsonl        append every broker operation here; the journal (FILE.jsonl.journal), each
                             account's state (FILE.jsonl.<account>.state.json) and trade events not yet recorded
                             by the service (FILE.jsonl.<account>.trades.json) and the managed positions
                             (FILE.jsonl.<account>.managed.json) live beside it. Default: in memory
  --ingress URL              default $INGRESS_URL, else http://127.0.0.1:\${PORT:-8080}
  --platform-version LIST    bridge versions reported in hello, e.g. mt5=2.1.0,ctrader=1.2.0 (the defaults)
  --balance N                starting balance of each paper account in USD (default 100000)
  --leverage N               account leverage (default 100)
  --closed SYMBOLS           force these markets closed, e.g. US30,XAUUSD
  --market FILE              steer prices and closed markets from this JSON file instead of the synthetic feed:
                             {"quotes": {"EURUSD": {"bid": 1.085, "ask": 1.0851}}, "closed": ["US30"]}
  --trader FILE              the trader's clicks in the terminal, one JSON line each, appended while it runs:
                             {"accountId": "acc-1", "op": "close" | "cancel", "ticket": "1000003"}
  --fault SPEC               fault injection, as env PAPER_FAULT: drop-before-report:<n>[@accountId],
                             crash-before-fill[@accountId], crash-after-fill[@accountId],
                             crash-after-stop-out-mark[@accountId], hold-trade-events[@accountId][,…]
  --wait-ms N                long-poll wait asked of the ingress (default 20000)
  --tick-ms N                market tick interval (default 250)
  --help`;

export interface CliOptions {
  registry: string;
  ledger?: string;
  ingress: string;
  versions: Record<Platform, string>;
  balance?: number;
  leverage?: number;
  closed: string[];
  market?: string;
  trader?: string;
  faults: Fault[];
  waitMs?: number;
  tickMs?: number;
}

export class UsageError extends Error {}

export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CliOptions | 'help' {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new UsageError(`unexpected argument ${arg}`);
    const name = m[1]!;
    const known = ['registry', 'ledger', 'ingress', 'platform-version', 'balance', 'leverage', 'closed', 'market', 'trader', 'fault', 'wait-ms', 'tick-ms'];
    if (!known.includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    values.set(name, value);
  }
  const registry = values.get('registry');
  if (!registry) throw new UsageError('--registry is required');
  const number = (name: string, min: number): number | undefined => {
    const raw = values.get(name);
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number ≥ ${min}`);
    return n;
  };
  const versions = { ...DEFAULT_BRIDGE_VERSIONS };
  for (const part of (values.get('platform-version') ?? '').split(',').filter((p) => p.trim() !== '')) {
    const m = /^(mt5|ctrader)=(\d+\.\d+\.\d+)$/.exec(part.trim());
    if (!m) throw new UsageError(`--platform-version: "${part}" is not platform=x.y.z (platform mt5 or ctrader)`);
    versions[m[1] as Platform] = m[2]!;
  }
  let faults: Fault[];
  try {
    faults = parseFaults(values.get('fault') ?? env.PAPER_FAULT);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return {
    registry,
    ledger: values.get('ledger'),
    ingress: values.get('ingress') ?? env.INGRESS_URL ?? `http://127.0.0.1:${env.PORT ?? 8080}`,
    versions,
    balance: number('balance', 0),
    leverage: number('leverage', 1),
    closed: (values.get('closed') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    market: values.get('market'),
    trader: values.get('trader'),
    faults,
    waitMs: number('wait-ms', 0),
    tickMs: number('tick-ms', 0),
  };
}

/** Only what the paper bridge needs of the import document; everything else in it is ignored. */
const registrySchema = z.looseObject({
  accounts: z.array(z.looseObject({ id: z.string().min(1), platform: z.enum(['mt5', 'ctrader']), bridgeToken: z.string().min(1).optional() })).default([]),
});

const CRASH_POINTS = { 'crash-before-fill': 'before_fill', 'crash-after-fill': 'after_fill', 'crash-after-stop-out-mark': 'after_stop_out_mark' } as const;

export function terminalsFor(options: CliOptions): PaperTerminal[] {
  const doc = registrySchema.parse(JSON.parse(fs.readFileSync(options.registry, 'utf8')));
  const ledger = options.ledger ? new FileLedger(options.ledger) : new MemoryLedger();
  const feed = options.market ? new FileMarket(options.market) : undefined;
  const die = (): never => {
    process.kill(process.pid, 'SIGKILL');
    throw new Error('unreachable: SIGKILL sent to self');
  };
  return doc.accounts
    .filter((a) => a.bridgeToken !== undefined)
    .map((a) => {
      const mine = (f: Fault) => f.accountId === undefined || f.accountId === a.id;
      const crash = options.faults.find((f): f is Extract<Fault, { kind: keyof typeof CRASH_POINTS }> => f.kind in CRASH_POINTS && mine(f));
      const terminal = new PaperTerminal({
        accountId: a.id,
        platform: a.platform,
        bridgeToken: a.bridgeToken!,
        ingressUrl: options.ingress,
        bridgeVersion: options.versions[a.platform],
        brokerOptions: { balance: options.balance, leverage: options.leverage, ...(feed ? { feed } : {}) },
        ...(crash ? { crash: { at: CRASH_POINTS[crash.kind], die } } : {}),
        ledger,
        journal: options.ledger ? new FileJournal(journalFileFor(options.ledger), a.id) : new MemoryJournal(),
        stateFile: options.ledger ? stateFileFor(options.ledger, a.id) : undefined,
        tradesFile: options.ledger ? tradesFileFor(options.ledger, a.id) : undefined,
        managementFile: options.ledger ? managementFileFor(options.ledger, a.id) : undefined,
        traderFile: options.trader,
        holdTradeEvents: options.faults.some((f) => f.kind === 'hold-trade-events' && mine(f)),
        waitMs: options.waitMs,
        tickMs: options.tickMs,
      });
      for (const symbol of options.closed) terminal.broker.setMarketOpen(symbol, false);
      for (const fault of options.faults) {
        if (fault.kind === 'drop-before-report' && (fault.accountId === undefined || fault.accountId === a.id)) terminal.dropAfterPlacing(fault.times);
      }
      return terminal;
    });
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  let options: CliOptions | 'help';
  let terminals: PaperTerminal[];
  try {
    options = parseArgs(argv);
    if (options === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    terminals = terminalsFor(options);
  } catch (err) {
    process.stderr.write(`paper-bridge: ${(err as Error).message}\n${err instanceof UsageError ? `${USAGE}\n` : ''}`);
    return 2;
  }
  if (terminals.length === 0) {
    process.stderr.write(`paper-bridge: no account in ${options.registry} has a bridgeToken\n`);
    return 2;
  }
  const stderr = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);
  stderr({
    time: new Date().toISOString(),
    event: 'started',
    ingress: options.ingress,
    ledger: options.ledger ?? null,
    accounts: terminals.map((t) => ({ id: t.accountId, platform: t.platform, bridgeVersion: t.bridgeVersion })),
  });
  const fleet = new BridgeFleet({
    ingressUrl: options.ingress,
    waitMs: options.waitMs,
    diag: stderr,
  });
  fleet.start(terminals.map((t) => t.asFleetAccount()));

  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(1);
      stopping = true;
      stderr({ time: new Date().toISOString(), event: 'stopping', signal });
      void fleet
        .stop()
        .then(() => Promise.all(terminals.map((t) => t.stop())))
        .then(() => resolve());
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  stderr({ time: new Date().toISOString(), event: 'stopped' });
  return 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`paper-bridge: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
