"""The bridge loop (docs/bridge-protocol.md): hello, long-poll, execute in seq order, journal, report until taken.

One bridge runs one terminal, which is logged into one trading account (one bridge token).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, TextIO, Tuple

from . import __version__
from .ingress import Ingress, IngressError
from .journal import Journal
from .risk import EquityMarks
from .manager import CAUSE_OF_MANAGEMENT_TAG, Manager
from .protocol import CAPABILITIES, ENTRY_ACTIONS, PLATFORM, Command, InvalidCommand, Report, iso, parse_command, parse_time
from .stop_out import StopOut
from .stop_out_store import StopOutStore
from .terminal import Outcome, TerminalUnavailable, pip_size, refused, tag_of
from .trade_events import TradeEvents
from .trade_outbox import TradeOutbox
from .trading import Trader
from .watch import Watch

MAX_SYMBOLS = 5000
SKEW_WARNING_S = 5.0


class Stop(Exception):
    """Asked to stop (SIGTERM, Ctrl+C) while idle."""


def seq_of(raw: Any) -> int:
    seq = raw.get("seq") if isinstance(raw, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else sys.maxsize


def utcnow() -> datetime:
    return datetime.now(timezone.utc)

# A heartbeat after this long without reports (protocol 1.2), as the paper bridge does.
HEARTBEAT_S = 30.0


class Bridge:
    def __init__(self, mt5: Any, ingress: Ingress, journal_for: Callable[[int], Journal], *,
                 terminal_path: Optional[str] = None, wait_ms: int = 20_000, server_utc_offset: Optional[int] = None,
                 out: TextIO = sys.stdout, diag: TextIO = sys.stderr, backoff_max_s: float = 5.0) -> None:
        self.mt5 = mt5
        self.ingress = ingress
        self._journal_for = journal_for
        self.journal: Optional[Journal] = None
        self.terminal_path = terminal_path
        self.wait_ms = wait_ms
        self._fixed_offset = server_utc_offset
        self._offset: Optional[int] = server_utc_offset
        self.trader = Trader(mt5, self.server_offset)
        # When the account's figures last went to the service (hello, reports, heartbeat), on the monotonic clock.
        self._figures_sent_at = 0.0
        self.heartbeat_s = HEARTBEAT_S
        self.account_id: Optional[str] = None
        self.skew_s = 0.0
        self.running = True
        self.busy = False
        # Taken for every command and every look of the stop-out's watch, and for anything else that asks the terminal
        # (its package is not documented as safe to call from two threads at once).
        self.lock = threading.RLock()
        # The stop-out (protocol 1.4): armed by the service's answers, it looks at the account under `lock`.
        self.watch = Watch(self.lock, ingress, self.figures, lambda **fields: self.log(self._diag, **fields))
        # Trade management (protocol 1.6): its own thread, under the same lock.
        self.manager = Manager(self.lock, self.trader, lambda **fields: self.log(self._diag, **fields))
        self._out = out
        self._diag = diag
        self._backoff_max = backoff_max_s

    # ---- logs ------------------------------------------------------------------------------------------------------

    def log(self, stream: TextIO, **fields: Any) -> None:
        stream.write(json.dumps({"time": iso(utcnow()), **fields}, default=str) + "\n")
        stream.flush()

    # ---- clocks ----------------------------------------------------------------------------------------------------

    def now(self) -> datetime:
        """The later of this machine's clock and the service's (as last seen): expiry is never judged early."""
        local = utcnow()
        return local if self.skew_s <= 0 else datetime.fromtimestamp(local.timestamp() + self.skew_s, timezone.utc)

    def _observe_server_time(self, server_time: Optional[str]) -> None:
        if not server_time:
            return
        try:
            self.skew_s = parse_time(server_time, "serverTime").timestamp() - time.time()
        except InvalidCommand:
            return
        if abs(self.skew_s) > SKEW_WARNING_S:
            self.log(self._diag, event="clock_skew", skewSeconds=round(self.skew_s, 3),
                     hint="synchronise this PC's clock; expiry is judged by the later clock")

    def server_offset(self) -> int:
        """Seconds the trade server's clock is ahead of UTC (MT5 times are server times), from a fresh tick."""
        if self._fixed_offset is not None:
            return self._fixed_offset
        symbols = self.mt5.symbols_get() or ()
        for info in symbols[:20]:
            tick = self.mt5.symbol_info_tick(info.name)
            if tick is None:
                continue
            diff = tick.time - time.time()
            if abs(diff) < 14 * 3600:
                self._offset = int(round(diff / 1800.0)) * 1800
                return self._offset
        return self._offset or 0

    # ---- terminal --------------------------------------------------------------------------------------------------

    def connect_terminal(self) -> None:
        with self.lock:
            self._connect_terminal()

    def _connect_terminal(self) -> None:
        ok = self.mt5.initialize(self.terminal_path) if self.terminal_path else self.mt5.initialize()
        if not ok:
            code, text = self.mt5.last_error()
            raise TerminalUnavailable(f"initialize: {code} {text} (is the MetaTrader 5 terminal running and logged in?)")
        account = self.mt5.account_info()
        if account is None:
            raise TerminalUnavailable("account_info: the terminal is not logged into a trading account")
        if self.journal is None:
            self.journal = self._journal_for(int(account.login))
            self.trader.marks = EquityMarks(self.journal.path + ".marks.json")
            self.watch.stop_out = StopOut(self.trader, StopOutStore(self.journal.path + ".stop-out.json"),
                                          lambda **fields: self.log(self._diag, **fields))
            outbox = TradeOutbox(self.journal.path + ".trades.json", lambda **fields: self.log(self._diag, **fields))
            self.watch.trades = TradeEvents(self.mt5, self.server_offset, outbox, self.cause_of_tag)
            self.watch.trades.start()
            self.trader.on_request = self._note_request
            self.manager.open(self.journal.path + ".managed.json")
            self.manager.on_moved = self._stop_moved
        terminal = self.mt5.terminal_info()
        if terminal is not None and not terminal.trade_allowed:
            self.log(self._diag, event="algo_trading_off",
                     hint="switch on Algo Trading in the terminal's toolbar; until then the broker refuses with 10027")

    def cause_of_tag(self, comment: str) -> Optional[Tuple[str, Optional[str]]]:
        """Who sent a request, from its comment: one of our commands, our stop-out or our trade management (None: not
        this bridge)."""
        if comment in CAUSE_OF_MANAGEMENT_TAG:
            return CAUSE_OF_MANAGEMENT_TAG[comment], None
        if comment.startswith("es-co:"):
            closing_for = self.journal.command_of_tag("es:" + comment[6:]) if self.journal is not None else None
            return "close_opposite", closing_for
        command_id = self.journal.command_of_tag(comment) if self.journal is not None else None
        if command_id is not None:
            return "command", command_id
        stop_out = self.watch.stop_out
        mark = stop_out.store.mark if stop_out is not None else None
        if mark is not None and comment == tag_of(mark["eventId"]):
            return "stop_out", None
        return None

    def _stop_moved(self, position: Dict[str, Any], intent: Dict[str, Any], move: int) -> None:
        if self.watch.trades is not None:
            self.watch.trades.managed_move(str(position["ticket"]), str(position["symbol"]), intent["sl"], intent["tp"],
                                           intent["cause"], intent.get("trailActiveAt"), move)

    def _note_request(self, request: Dict[str, Any], fields: Optional[Dict[str, Any]] = None) -> None:
        trades = self.watch.trades
        if trades is None:
            return
        if request.get("action") == self.mt5.TRADE_ACTION_SLTP:
            key = f"position:{request.get('position')}"
        elif request.get("action") in (self.mt5.TRADE_ACTION_MODIFY, self.mt5.TRADE_ACTION_REMOVE):
            key = f"order:{request.get('order')}"
        else:
            return
        trades.outbox.note_request(key, str(request.get("comment") or ""), int(self.trader.server_now_ms()), fields)

    def hello_body(self) -> Dict[str, Any]:
        with self.lock:
            return self._hello_body()

    def _hello_body(self) -> Dict[str, Any]:
        symbols = []
        for info in (self.mt5.symbols_get() or ())[:MAX_SYMBOLS]:
            if info.trade_mode == self.mt5.SYMBOL_TRADE_MODE_DISABLED or info.volume_step <= 0 or info.volume_min <= 0:
                continue
            symbols.append({"name": info.name, "digits": int(info.digits), "pipSize": pip_size(info.digits, info.point, info.name),
                            "volumeStep": min(float(info.volume_step), 100.0), "volumeMin": min(float(info.volume_min), 100.0),
                            "volumeMax": float(info.volume_max)})
        body: Dict[str, Any] = {"platform": PLATFORM, "bridgeVersion": __version__, "capabilities": CAPABILITIES,
                                "symbols": symbols}
        figures = self.figures()
        if figures is not None:
            body["account"] = figures
        return body

    def figures(self) -> Optional[Dict[str, Any]]:
        """The account's money now, from account_info(), as the service keeps it (protocol 1.2)."""
        with self.lock:
            account = self.mt5.account_info()
        if account is None:
            return None
        return {"balance": float(account.balance), "equity": float(account.equity), "margin": float(account.margin),
                "freeMargin": float(account.margin_free), "currency": str(account.currency)}

    def heartbeat_if_due(self) -> bool:
        """The figures alone when none went for heartbeat_s: the service keeps them fresh while nothing is reported."""
        if time.monotonic() - self._figures_sent_at < self.heartbeat_s:
            return False
        figures = self.figures()
        if figures is None:
            return False
        self.ingress.reports([], figures)
        self._figures_sent_at = time.monotonic()
        return True

    def hello(self) -> None:
        answer = self.ingress.hello(self.hello_body())
        self._figures_sent_at = time.monotonic()
        self.account_id = str(answer.get("accountId"))
        self._observe_server_time(answer.get("serverTime"))
        self.log(self._diag, event="hello", accountId=self.account_id, bridgeVersion=__version__,
                 protocolVersion=answer.get("protocolVersion"))
        self.watch.arm(answer.get("stopOut"))
        self.watch.trade_sender.book_now()

    # ---- commands --------------------------------------------------------------------------------------------------

    def handle(self, raw: Any) -> Optional[Report]:
        """One delivered command to its report: from the journal if handled before, else expired, refused or run."""
        assert self.journal is not None
        command_id = raw.get("commandId") if isinstance(raw, dict) else None
        if not isinstance(command_id, str) or not command_id:
            self.log(self._diag, event="command_without_id")
            return None
        entry = self.journal.get(command_id)
        if entry is not None and entry.report is not None:
            self.log(self._out, event="command", commandId=command_id, replayed=True, status=entry.report.status,
                     ticket=entry.report.ticket)
            return entry.report
        try:
            cmd: Optional[Command] = parse_command(raw)
        except InvalidCommand as err:
            cmd = None
            outcome = refused("bridge_invalid_command", f"invalid command: {err}")
        if cmd is not None:
            outcome = self._decide(cmd, recovering=entry is not None and entry.intent_at is not None)
        report = self.journal.record_report(Report(
            commandId=command_id, status=outcome.status, ticket=outcome.ticket, price=outcome.price,
            volume=outcome.volume, retcode=outcome.retcode, message=outcome.message, executedAt=iso(utcnow())))
        self.log(self._out, event="command", commandId=command_id, seq=raw.get("seq"), action=raw.get("action"),
                 symbol=raw.get("symbol"), status=report.status, ticket=report.ticket, price=report.price,
                 volume=report.volume, retcode=report.retcode, message=report.message, replayed=False)
        return report

    def _decide(self, cmd: Command, recovering: bool) -> Outcome:
        assert self.journal is not None
        if self.account_id is not None and cmd.account_id != self.account_id:
            return refused("bridge_wrong_account", f"command for {cmd.account_id} delivered to {self.account_id}")
        expired = self.now() > cmd.expires_at
        if expired and not recovering:
            return Outcome("expired", message=f"not executed: expired at {iso(cmd.expires_at)}")
        if expired:
            # It may have run before the crash: only what the trade server shows counts, and nothing new is sent.
            found = self.trader.recover(cmd)
            if found is not None:
                self._manage(cmd, found)
            return found or Outcome("expired", message=f"not executed: expired at {iso(cmd.expires_at)}")
        self.journal.record_intent(cmd.command_id)
        return self._manage(cmd, self.trader.execute(cmd, recovering))

    def _manage(self, cmd: Command, outcome: Outcome) -> Outcome:
        """An entry that filled and asked for management is managed from now on (written down before its report)."""
        if cmd.action in ENTRY_ACTIONS and outcome.status == "filled" and cmd.management:
            self.manager.after_entry(cmd, outcome.ticket)
        return outcome

    def send_reports(self, reports: List[Report]) -> None:
        """Until the ingress takes them (they are idempotent); 4xx other than 429 is a fault of ours: reconnect."""
        delay = 0.05
        body = [r.to_json() for r in reports]
        figures = self.figures()
        for start in range(0, len(body), 100):
            chunk = body[start:start + 100]
            while True:
                try:
                    for result in self.ingress.reports(chunk, figures):
                        if isinstance(result, dict) and result.get("result") == "unknown":
                            self.log(self._diag, event="report_unknown_command", commandId=result.get("commandId"))
                    self._figures_sent_at = time.monotonic()
                    break
                except IngressError as err:
                    if not err.retryable:
                        raise
                    wait = max(delay, err.retry_after or 0.0)
                    self.log(self._diag, event="report_retry", error=str(err), retryInMs=int(wait * 1000))
                    time.sleep(wait)
                    delay = min(delay * 2, self._backoff_max)

    # ---- the loop --------------------------------------------------------------------------------------------------

    def run(self) -> None:
        delay = 0.05
        terminal_up = False
        connected = False
        superseded = 0
        self.watch.start()
        self.manager.start()
        while self.running:
            pause = 0.0
            try:
                if not terminal_up:
                    self.connect_terminal()
                    terminal_up = True
                    # A stop-out a crash interrupted finishes before any command runs (and before a Ctrl+C stops us).
                    self.busy = True
                    try:
                        self.watch.check()
                    finally:
                        self.busy = False
                if not connected:
                    self.hello()
                    connected = True
                poll = self.ingress.commands(self.wait_ms)
                self._observe_server_time(poll.server_time)
                self.watch.arm(poll.stop_out)
                delay = 0.05
                if poll.commands:
                    self._run_batch(poll.commands)
                else:
                    self.heartbeat_if_due()
                superseded = superseded + 1 if poll.superseded else 0
                if superseded >= 3:
                    # Normal once after a reconnect; again and again means a second bridge holds this token.
                    self.log(self._diag, event="superseded", times=superseded,
                             hint="another bridge is polling with this account's token: run one bridge per token")
                    pause = min(0.05 * 2 ** superseded, self._backoff_max)
            except TerminalUnavailable as err:
                terminal_up = connected = False
                self.log(self._diag, event="terminal_unavailable", error=str(err), retryInMs=int(delay * 1000))
                with self.lock:
                    try:
                        self.mt5.shutdown()
                    except Exception:
                        pass
            except IngressError as err:
                connected = False
                pause = max(delay, err.retry_after or 0.0)
                delay = min(delay * 2, self._backoff_max)
                self.log(self._diag, event="connection_error", error=str(err), retryInMs=int(pause * 1000))
            if not terminal_up and self.running:
                pause = max(pause, delay)
                delay = min(delay * 2, self._backoff_max)
            if pause > 0 and self.running:
                time.sleep(pause)
        self.watch.stop()
        self.manager.stop()

    def _run_batch(self, commands: List[Any]) -> None:
        ordered = sorted(commands, key=seq_of)
        reports: List[Report] = []
        self.busy = True
        try:
            for raw in ordered:
                try:
                    with self.lock:
                        report = self.handle(raw)
                except TerminalUnavailable:
                    # Stop here: the rest waits for the terminal (they are delivered again after the next hello).
                    if reports:
                        self.send_reports(reports)
                    raise
                if report is not None:
                    reports.append(report)
                # After each command: a fill or a close can be what crosses the stop-out's line, and what it did
                # is in the history for the trade events.
                self.watch.check()
                self.watch.poll_trades()
            if reports:
                self.send_reports(reports)
        finally:
            self.busy = False
