import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { helloSchema, reportsBodySchema, type BridgeCommand, type BridgeReport } from '../../src/domain/bridge-protocol';
import { ManualFeed } from '../../src/paper/broker';
import { FileJournal } from '../../src/paper/journal';
import { FileLedger, MemoryLedger, journalFileFor, readLedger, stateFileFor } from '../../src/paper/ledger';
import { PaperTerminal, type TerminalOptions } from '../../src/paper/terminal';
import { paperCommand } from '../helpers/paper-command';

/**
 * The terminal against a stand-in ingress that keeps the bridge API's delivery contract (at-least-once: whatever was
 * handed out and not reported is handed out again after a new hello; the first report of a command wins) and checks
 * every hello and report body against the shared protocol schemas.
 */
class FakeIngress {
  readonly hellos: unknown[] = [];
  /** Requests refused for their token. */
  refused = 0;
  readonly reportBodies: BridgeReport[][] = [];
  readonly reports = new Map<string, BridgeReport>();
  readonly invalid: string[] = [];
  failReports = 0;
  failHellos = 0;
  private readonly queue: BridgeCommand[] = [];
  private readonly delivered = new Map<string, number>();
  private session = 0;
  private server!: http.Server;
  url = '';

  constructor(private readonly tokens: Record<string, string>) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  enqueue(command: BridgeCommand): void {
    this.queue.push(command);
  }

  private take(accountId: string): BridgeCommand[] {
    const due = this.queue.filter((c) => c.accountId === accountId && !this.reports.has(c.commandId) && this.delivered.get(c.commandId) !== this.session);
    for (const c of due) this.delivered.set(c.commandId, this.session);
    return due.sort((a, b) => a.seq - b.seq);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const accountId = token ? this.tokens[token] : undefined;
    if (!accountId) {
      this.refused++;
      return void send(401, { error: 'Missing or invalid bridge token' });
    }
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/bridge/v1/hello') {
      if (this.failHellos > 0) {
        this.failHellos--;
        return void send(502, { error: 'bad gateway' });
      }
      const body = JSON.parse(raw);
      if (!helloSchema.safeParse(body).success) this.invalid.push(raw);
      this.hellos.push(body);
      this.session++;
      return void send(200, { accountId, protocolVersion: 1, serverTime: new Date().toISOString() });
    }
    if (req.method === 'GET' && url.pathname === '/bridge/v1/commands') {
      const deadline = Date.now() + Math.min(Number(url.searchParams.get('waitMs') ?? 0), 300);
      let commands = this.take(accountId);
      while (commands.length === 0 && Date.now() < deadline && !res.destroyed) {
        await new Promise((r) => setTimeout(r, 5));
        commands = this.take(accountId);
      }
      return void send(200, { commands, serverTime: new Date().toISOString() });
    }
    if (req.method === 'POST' && url.pathname === '/bridge/v1/reports') {
      if (this.failReports > 0) {
        this.failReports--;
        return void send(503, { error: 'System under high load, retry later', backpressure: true });
      }
      const parsed = reportsBodySchema.safeParse(JSON.parse(raw));
      if (!parsed.success) {
        this.invalid.push(raw);
        return void send(400, { error: 'Invalid reports' });
      }
      this.reportBodies.push(parsed.data.reports);
      const results = parsed.data.reports.map((r) => {
        const first = !this.reports.has(r.commandId);
        if (first) this.reports.set(r.commandId, r);
        return { commandId: r.commandId, result: first ? 'recorded' : 'duplicate' };
      });
      return void send(200, { results });
    }
    send(404, { error: 'not found' });
  }
}

const TOKEN = 'brg_test_0123456789abcdef';

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const command = paperCommand;

describe('paper terminal', () => {
  let ingress: FakeIngress;
  const terminals: PaperTerminal[] = [];
  const logs: Record<string, unknown>[] = [];

  function terminal(over: Partial<TerminalOptions> = {}): PaperTerminal {
    const feed = new ManualFeed();
    feed.set('EURUSD', 1.085, 1.0851);
    const t = new PaperTerminal({
      accountId: 'acc-1',
      platform: 'mt5',
      bridgeToken: TOKEN,
      ingressUrl: ingress.url,
      brokerOptions: { feed },
      ledger: new MemoryLedger(),
      waitMs: 200,
      tickMs: 0,
      backoff: { initialMs: 5, maxMs: 20 },
      log: (line) => logs.push(line),
      diag: () => undefined,
      ...over,
    });
    terminals.push(t);
    return t;
  }

  beforeEach(async () => {
    logs.length = 0;
    ingress = new FakeIngress({ [TOKEN]: 'acc-1' });
    await ingress.start();
  });

  afterEach(async () => {
    await Promise.all(terminals.splice(0).map((t) => t.stop()));
    await ingress.stop();
  });

  test('when a command is delivered, then the terminal says hello, executes it and reports filled with ticket, price and volume', async () => {
    const t = terminal();
    const cmd = command({ slPips: 20 });
    ingress.enqueue(cmd);
    t.start();
    await until(() => ingress.reports.has(cmd.commandId));
    expect(ingress.hellos[0]).toEqual({
      platform: 'mt5',
      bridgeVersion: '2.1.0',
      capabilities: expect.arrayContaining(['buy', 'buy_stop_limit', 'modify_pending_expiry', 'risk_sizing', 'loss_guards']),
      symbols: expect.arrayContaining([{ name: 'EURUSD', digits: 5, pipSize: 0.0001, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 100 }]),
      account: { balance: 100_000, equity: 100_000, margin: 0, freeMargin: 100_000, currency: 'USD' },
    });
    expect(ingress.reports.get(cmd.commandId)).toMatchObject({ commandId: cmd.commandId, status: 'filled', ticket: '1000001', price: 1.0851, volume: 0.1 });
    expect((t.ledger as MemoryLedger).entries).toEqual([
      expect.objectContaining({
        accountId: 'acc-1',
        commandId: cmd.commandId,
        action: 'buy',
        op: 'open',
        ticket: '1000001',
        symbol: 'EURUSD',
        side: 'buy',
        volume: 0.1,
        price: 1.0851,
        sl: 1.0831,
      }),
    ]);
    expect(logs).toEqual([expect.objectContaining({ event: 'command', commandId: cmd.commandId, status: 'filled', replayed: false })]);
    expect(ingress.invalid).toEqual([]);
  });

  test('when several commands arrive, then they run in seq order and a rejection carries the broker retcode', async () => {
    const t = terminal();
    const a = command({ action: 'buy_limit', price: 1.08 });
    const b = command({ action: 'cancel_pending' });
    const c = command({ action: 'sell', symbol: 'NOPE' });
    ingress.enqueue(c);
    ingress.enqueue(a);
    t.start();
    await until(() => ingress.reports.size === 2);
    ingress.enqueue({ ...b, orderId: ingress.reports.get(a.commandId)!.ticket! });
    await until(() => ingress.reports.size === 3);
    expect(ingress.reports.get(c.commandId)).toMatchObject({ status: 'rejected', retcode: 10013, message: 'Invalid request: unknown symbol NOPE' });
    expect(ingress.reports.get(b.commandId)).toMatchObject({ status: 'done', ticket: '1000001' });
    expect((t.ledger as MemoryLedger).entries.map((e) => e.op)).toEqual(['place', 'cancel']);
  });

  test('when the connection drops after the order was placed and before the report, then the redelivery is answered from the journal without a second order', async () => {
    const t = terminal();
    t.dropAfterPlacing(2);
    const cmd = command();
    ingress.enqueue(cmd);
    t.start();
    await until(() => ingress.reports.has(cmd.commandId));
    expect(t.stats).toMatchObject({ drops: 2, executed: 1, replayed: 2 });
    expect(ingress.hellos).toHaveLength(3);
    expect((t.ledger as MemoryLedger).entries.filter((e) => e.op === 'open')).toHaveLength(1);
    expect(t.broker.positions()).toHaveLength(1);
    expect(ingress.reports.get(cmd.commandId)).toEqual(t.journal.get(cmd.commandId));
    expect(logs.map((l) => l.replayed)).toEqual([false, true, true]);
  });

  test('when a command is past its expiresAt, then it is reported expired and never executed, and a redelivery gets the same answer', async () => {
    const t = terminal();
    t.dropAfterPlacing(1);
    const cmd = command({ expiresAt: new Date(Date.now() - 1).toISOString() });
    ingress.enqueue(cmd);
    t.start();
    await until(() => ingress.reports.has(cmd.commandId));
    expect(ingress.reports.get(cmd.commandId)).toMatchObject({ status: 'expired', ticket: null });
    expect((t.ledger as MemoryLedger).entries).toEqual([]);
    expect(t.stats).toMatchObject({ executed: 0, replayed: 1 });
  });

  test('when the report POST fails with 503, then it is retried until the ingress takes it', async () => {
    const t = terminal();
    ingress.failReports = 3;
    const cmd = command();
    ingress.enqueue(cmd);
    t.start();
    await until(() => ingress.reports.has(cmd.commandId));
    expect(ingress.failReports).toBe(0);
    expect(ingress.hellos).toHaveLength(1);
    expect(t.stats.executed).toBe(1);
  });

  test('when hello fails, then the terminal backs off and connects on a later attempt', async () => {
    const t = terminal();
    ingress.failHellos = 3;
    const cmd = command();
    ingress.enqueue(cmd);
    t.start();
    await until(() => ingress.reports.has(cmd.commandId));
    expect(ingress.failHellos).toBe(0);
    expect(ingress.hellos).toHaveLength(1);
  });

  test('when the bridge version predates stop-limit orders, then such a command is refused as bridge_unsupported_action', async () => {
    const t = terminal({ bridgeVersion: '1.5.0' });
    const cmd = command({ action: 'buy_stop_limit', price: 1.086, stopLimitPrice: 1.087 });
    ingress.enqueue(cmd);
    t.start();
    await until(() => ingress.reports.has(cmd.commandId));
    expect(ingress.reports.get(cmd.commandId)).toMatchObject({ status: 'rejected', retcode: 'bridge_unsupported_action' });
    expect((ingress.hellos[0] as { capabilities: string[] }).capabilities).not.toContain('buy_stop_limit');
  });

  test('when the command carries maxOpenPositions, then the guard applies', async () => {
    const t = terminal();
    const first = command();
    const second = command({ maxOpenPositions: 1 });
    ingress.enqueue(first);
    ingress.enqueue(second);
    t.start();
    await until(() => ingress.reports.size === 2);
    expect(ingress.reports.get(second.commandId)).toMatchObject({ status: 'rejected', retcode: 'risk_max_open_positions' });
  });

  /** A terminal on files in a new directory that placed one buy and never reported it, stopped. */
  const placedUnreported = async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paper-'));
    const ledgerFile = path.join(dir, 'ledger.jsonl');
    const make = () =>
      terminal({
        ledger: new FileLedger(ledgerFile),
        journal: new FileJournal(journalFileFor(ledgerFile), 'acc-1'),
        stateFile: stateFileFor(ledgerFile, 'acc-1'),
      });
    const first = make();
    first.dropAfterPlacing(1_000_000); // never manages to report
    const cmd = command();
    ingress.enqueue(cmd);
    first.start();
    await until(() => first.stats.executed === 1);
    await first.stop();
    return { dir, ledgerFile, make, cmd };
  };

  test('when the paper bridge restarts with the same ledger, then the journal and the account state are reloaded and a redelivery is not executed again', async () => {
    const { dir, ledgerFile, make, cmd } = await placedUnreported();
    expect(ingress.reports.size).toBe(0);

    const second = make();
    expect(second.broker.positions()).toHaveLength(1);
    second.start();
    await until(() => ingress.reports.has(cmd.commandId));
    expect(second.stats).toMatchObject({ executed: 0, replayed: 1 });
    expect(readLedger(ledgerFile).filter((e) => e.op === 'open')).toEqual([expect.objectContaining({ accountId: 'acc-1', commandId: cmd.commandId })]);
    const close = command({ action: 'close', symbol: undefined, volume: undefined, positionId: ingress.reports.get(cmd.commandId)!.ticket! });
    ingress.enqueue(close);
    await until(() => ingress.reports.has(close.commandId));
    expect(ingress.reports.get(close.commandId)).toMatchObject({ status: 'done' });
    expect(readLedger(ledgerFile).map((e) => e.op)).toEqual(['open', 'close']);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('when the paper bridge was killed after its ledger line and before its state and journal were written, then the redelivery is found in the ledger and not placed again', async () => {
    const { dir, ledgerFile, make, cmd } = await placedUnreported();
    // What a SIGKILL in that window leaves: the broker's ledger line, neither the state nor the journal line.
    fs.rmSync(stateFileFor(ledgerFile, 'acc-1'));
    fs.rmSync(journalFileFor(ledgerFile));
    const second = make();
    expect(second.broker.positions()).toHaveLength(0);
    second.start();
    await until(() => ingress.reports.has(cmd.commandId));
    expect(second.stats).toMatchObject({ executed: 0, replayed: 1 });
    const opened = readLedger(ledgerFile).filter((e) => e.op === 'open');
    expect(opened).toEqual([expect.objectContaining({ accountId: 'acc-1', commandId: cmd.commandId })]);
    expect(ingress.reports.get(cmd.commandId)).toMatchObject({ status: 'filled', ticket: opened[0]!.ticket });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("when the paper bridge restarts on a bad day, then the loss guard still measures from the day's opening equity it saw before", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paper-marks-'));
    const stateFile = stateFileFor(path.join(dir, 'ledger.jsonl'), 'acc-1');
    const feed = new ManualFeed();
    feed.set('EURUSD', 1.085, 1.0851);
    const guards = { dailyLossAmount: 100, timezone: 'UTC' };
    const first = terminal({ stateFile, brokerOptions: { feed } });
    const entry = command({ volume: 1, lossGuards: guards });
    first.handle(entry);
    expect(first.journal.get(entry.commandId)).toMatchObject({ status: 'filled' });
    // 51 pips against the 1-lot buy: equity is 520 USD below the day's opening.
    feed.set('EURUSD', 1.08, 1.0801);
    const refused = command({ volume: 1, lossGuards: guards });
    first.handle(refused);
    expect(first.journal.get(refused.commandId)).toMatchObject({ status: 'rejected', retcode: 'risk_daily_loss_limit' });

    // A new process on the same state file: without the saved marks it would take today's equity as the day's opening.
    const second = terminal({ stateFile, brokerOptions: { feed } });
    expect(second.marks.state()).toEqual(first.marks.state());
    const again = command({ volume: 1, lossGuards: guards });
    second.handle(again);
    expect(second.journal.get(again.commandId)).toMatchObject({ status: 'rejected', retcode: 'risk_daily_loss_limit' });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('when a crash is armed before or after the fill, then the terminal dies there: nothing executed, or executed and journaled with no report', () => {
    class Died extends Error {}
    const die = (): never => {
      throw new Died();
    };
    const before = terminal({ crash: { at: 'before_fill', die } });
    const a = command();
    expect(() => before.handle(a)).toThrow(Died);
    expect([before.broker.positions().length, before.journal.get(a.commandId)]).toEqual([0, undefined]);

    const after = terminal({ crash: { at: 'after_fill', die } });
    const b = command();
    expect(() => after.handle(b)).toThrow(Died);
    expect(after.broker.positions()).toHaveLength(1);
    expect(after.journal.get(b.commandId)).toMatchObject({ status: 'filled', ticket: after.broker.positions()[0]!.ticket });
    expect(after.stats.reportsSent).toBe(0);
  });

  test('when the token is refused, then the terminal keeps retrying hello and never polls', async () => {
    const t = terminal({ bridgeToken: 'brg_wrong_token_0000000' });
    t.start();
    // It has tried, been refused and tried again: only then does "no hello, no poll" say anything.
    await until(() => ingress.refused >= 3);
    expect(t.stats).toMatchObject({ hellos: 0, polls: 0 });
  });
});
