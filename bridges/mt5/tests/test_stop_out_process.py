"""The stop-out in the real bridge process (`python -m es_mt5_bridge`) on the MetaTrader5 double, against a stand-in
for the service that holds every long-poll open: the watch trips while the main thread waits on the poll, the event
goes out on the reports call, and SIGTERM still stops the bridge cleanly."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List

import pytest

from conftest import HERE, Double, StandIn, answer_json

ARMED = {"maxDrawdownPercent": 10, "drawdownResetAt": None, "figuresMaxAgeMs": 60_000}


class Service(StandIn):
    def __init__(self) -> None:
        self.polls = 0
        self.events: List[Dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                service.polls += 1
                service.release.wait(30)  # the long-poll: nothing to hand out
                answer_json(self, {"commands": [], "serverTime": None, "stopOut": ARMED})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/hello"):
                    answer_json(self, {"accountId": "acc-1", "protocolVersion": "1.4", "serverTime": None, "stopOut": ARMED})
                    return
                if self.path.endswith("/trades"):  # protocol 1.5: trade events are not this test's
                    answer_json(self, {"events": [{"eventId": e["eventId"], "result": "recorded"}
                                                  for e in body.get("events") or []], "book": "recorded"})
                    return
                service.events.extend(body.get("events") or [])
                answer_json(self, {"results": [], "events": [{"eventId": e["eventId"], "result": "recorded"}
                                                        for e in body.get("events") or []]})

            def log_message(self, *args: Any) -> None:
                pass

        self.serve(Handler)


def until(what: str, condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
def test_when_the_long_poll_is_waiting_then_the_bridge_process_still_trips_closes_and_reports(double: Double, tmp_path) -> None:
    opened = double.mt5.order_send({"action": double.mt5.TRADE_ACTION_DEAL, "symbol": "EURUSD", "volume": 10.0,
                                    "type": double.mt5.ORDER_TYPE_BUY, "price": 1.0851, "type_filling": double.mt5.ORDER_FILLING_FOK})
    assert opened.retcode == double.mt5.TRADE_RETCODE_DONE
    service = Service()
    data = tmp_path / "bridge-data"
    env = {**os.environ, "ES_BRIDGE_TOKEN": "brg_test", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([os.path.join(HERE, "..", "src"), os.path.join(HERE, "double")])}
    proc = subprocess.Popen([sys.executable, "-m", "es_mt5_bridge", "--url", service.url, "--data-dir", str(data)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        marks = data / "journal-5012345.jsonl.marks.json"
        until("the watch to see the peak", lambda: marks.exists() and json.loads(marks.read_text())["peak"] > 0)
        until("the long-poll", lambda: service.polls >= 1)
        double.set_quote("EURUSD", 1.0741, 1.0742)  # 11 000 below the peak of 99 990
        until("the stop-out's event", lambda: len(service.events) == 1)
        assert service.polls == 1  # all of it while the one long-poll was held
        assert double.mt5.positions_get() == ()
        [event] = service.events
        assert (event["eventId"], [c["result"] for c in event["closed"]]) == ("stop-out/initial", ["closed"])
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        assert '"event": "stop_out"' in (proc.stderr.read() if proc.stderr else "")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
        service.close()
