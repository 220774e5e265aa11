"""Trade events in the real bridge process (`python -m es_mt5_bridge`) on the MetaTrader5 double: the terminal
changes while the service answers 503, the process is killed (SIGKILL) with the events on disk, and the next process
sends each of them once, in order."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from typing import Any, Dict, List

import pytest

from conftest import HERE, Double, StandIn, answer_json
from test_stop_out_process import until


class Service(StandIn):
    def __init__(self) -> None:
        self.available = False
        self.received: List[str] = []
        self.recorded: List[str] = []
        self.books: List[Dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                service.release.wait(1)
                answer_json(self, {"commands": [], "serverTime": None})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/hello"):
                    answer_json(self, {"accountId": "acc-1", "protocolVersion": "1.5", "serverTime": None})
                    return
                if not self.path.endswith("/trades"):
                    answer_json(self, {"results": []})
                    return
                ids = [e["eventId"] for e in body.get("events") or []]
                service.received.extend(ids)
                if not service.available:
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if body.get("book"):
                    service.books.append(body["book"])
                results = [{"eventId": i, "result": "duplicate" if i in service.recorded else "recorded"} for i in ids]
                service.recorded.extend(i for i in ids if i not in service.recorded)
                answer_json(self, {"events": results, "book": "recorded" if body.get("book") else "absent"})

            def log_message(self, *args: Any) -> None:
                pass

        self.serve(Handler)


def start(service: Service, data: Any) -> "subprocess.Popen[str]":
    env = {**os.environ, "ES_BRIDGE_TOKEN": "brg_test", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([os.path.join(HERE, "..", "src"), os.path.join(HERE, "double")])}
    # Its diagnostics beside its data, shown with a failure (pytest prints what a failed test printed).
    data.mkdir(parents=True, exist_ok=True)
    with open(data.parent / "bridge-stderr.log", "a", encoding="utf-8") as diag:
        return subprocess.Popen([sys.executable, "-m", "es_mt5_bridge", "--url", service.url, "--data-dir", str(data),
                                 "--wait-ms", "1000"], env=env, stdout=subprocess.DEVNULL, stderr=diag, text=True)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_events_a_killed_bridge_held_are_sent_once_by_the_next_one(double: Double, tmp_path) -> None:
    service = Service()
    data = tmp_path / "bridge-data"
    outbox = data / "journal-5012345.jsonl.trades.json"

    def waiting() -> List[Dict[str, Any]]:
        return json.loads(outbox.read_text())["unacknowledged"] if outbox.exists() else []

    proc = start(service, data)
    try:
        until("the bridge's first look", lambda: outbox.exists())
        mt5 = double.mt5
        opened = mt5.order_send({"action": mt5.TRADE_ACTION_DEAL, "symbol": "EURUSD", "volume": 1.0, "sl": 1.08,
                                 "type": mt5.ORDER_TYPE_BUY, "price": 1.0851, "type_filling": mt5.ORDER_FILLING_FOK})
        assert opened.retcode == mt5.TRADE_RETCODE_DONE
        double.set_quote("EURUSD", 1.0795, 1.0796)  # through the SL
        until("both events on disk", lambda: len(waiting()) == 2)
        until("a refused attempt", lambda: len(service.received) >= 2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        held = [e["eventId"] for e in waiting()]
        assert [e["type"] for e in waiting()] == ["position_opened", "position_closed"]
        assert waiting()[1]["cause"] == "stop_loss"

        service.available = True
        proc = start(service, data)
        until("the events recorded", lambda: service.recorded == held)
        until("the outbox empty", lambda: waiting() == [])
        until("a book", lambda: len(service.books) >= 1)
        assert service.books[-1]["positions"] == []
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        assert service.recorded == held  # each once, in order
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        service.close()
        log = tmp_path / "bridge-stderr.log"
        print(f"the bridge's diagnostics:\n{log.read_text()[-6000:] if log.exists() else '(none)'}")
        print(f"the trade server's state: {json.dumps(double.server())[-3000:]}")
