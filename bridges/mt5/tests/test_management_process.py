"""A restart in the middle of a trail, in the real bridge process (`python -m es_mt5_bridge`) on the MetaTrader5
double: the process dies by SIGKILL with a stop move in flight (after the trade server took it, or before) or between
two moves, the price moves on while it is down, and the next process resumes the trail from its state file and the
broker's position. The double's list of accepted requests counts the moves: none twice for one step."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler
from typing import Any, Dict, List, Optional

import pytest

from conftest import HERE, Double, StandIn, answer_json
from test_stop_out_process import until

SLTP = 6


class Service(StandIn):
    """Hands out one buy asking for a trail, then holds each long-poll a second; takes reports and trade events."""

    def __init__(self, command: Dict[str, Any]) -> None:
        self.to_deliver: List[Dict[str, Any]] = [command]
        self.reports: List[Dict[str, Any]] = []
        self.events: List[Dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                if service.to_deliver:
                    commands, service.to_deliver = service.to_deliver, []
                    answer_json(self, {"commands": commands, "serverTime": None})
                    return
                service.release.wait(1)
                answer_json(self, {"commands": [], "serverTime": None})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/hello"):
                    answer_json(self, {"accountId": "acc-1", "protocolVersion": "1.6", "serverTime": None})
                    return
                if self.path.endswith("/trades"):
                    service.events.extend(body.get("events") or [])
                    answer_json(self, {"events": [{"eventId": e["eventId"], "result": "recorded"} for e in body.get("events") or []],
                                       "book": "recorded" if body.get("book") else "absent"})
                    return
                service.reports.extend(body.get("reports") or [])
                answer_json(self, {"results": [{"commandId": r["commandId"], "result": "recorded"} for r in body.get("reports") or []]})

            def log_message(self, *args: Any) -> None:
                pass

        self.serve(Handler)


def start(service: Service, data: Any, crash: Optional[str]) -> "subprocess.Popen[str]":
    env = {**os.environ, "ES_BRIDGE_TOKEN": "brg_test", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([os.path.join(HERE, "..", "src"), os.path.join(HERE, "double")])}
    env.pop("MT5_DOUBLE_CRASH", None)
    env.pop("MT5_DOUBLE_CRASH_ACTION", None)
    if crash:
        env.update(MT5_DOUBLE_CRASH=crash, MT5_DOUBLE_CRASH_ACTION=str(SLTP))
    return subprocess.Popen([sys.executable, "-m", "es_mt5_bridge", "--url", service.url, "--data-dir", str(data),
                             "--wait-ms", "1000"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def trail_command() -> Dict[str, Any]:
    now = datetime.now(timezone.utc)
    return {"commandId": "signal/s1/account/acc-1", "seq": 1, "signalId": "s1", "accountId": "acc-1", "action": "buy",
            "acceptedAt": now.isoformat().replace("+00:00", "Z"),
            "expiresAt": (now + timedelta(seconds=60)).isoformat().replace("+00:00", "Z"),
            "symbol": "EURUSD", "volume": 0.1, "sl": 1.083, "trailDistancePips": 10, "trailTriggerPips": 0, "trailStepPips": 1}


def moves(double: Double) -> List[float]:
    return [r["sl"] for r in double.server().get("requests", []) if r["action"] == SLTP]


def sl_of(double: Double) -> Optional[float]:
    positions = double.server()["positions"]
    return positions[0]["sl"] if positions else None


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
@pytest.mark.parametrize("when, after_restart", [
    # The trade server took the move 1.085, then the process died before it heard: counted, not sent again.
    ("after_fill", [1.085, 1.0856]),
    # The process died before the trade server saw the move: the next quote makes it, once, from the trail's best.
    ("before_fill", [1.0856]),
    # Killed between two moves.
    ("idle", [1.085, 1.0856]),
])
def test_a_bridge_killed_mid_trail_resumes_it_and_moves_no_stop_twice(double: Double, tmp_path, when: str,
                                                                       after_restart: List[float]) -> None:
    service = Service(trail_command())
    data = tmp_path / "bridge-data"
    state_file = data / "journal-5012345.jsonl.managed.json"
    proc = start(service, data, None if when == "idle" else when)
    try:
        until("the entry's report", lambda: len(service.reports) == 1)
        assert service.reports[0]["status"] == "filled" and service.reports[0]["price"] == 1.0851
        assert json.loads(state_file.read_text())["positions"][0]["trail"]["activeAt"] is None
        double.set_quote("EURUSD", 1.086, 1.0861)  # the trail starts: its stop is 1.085
        if when == "idle":
            until("the first move, settled in the state file",
                  lambda: json.loads(state_file.read_text())["positions"][0]["stopMoves"] == 1)
            proc.send_signal(signal.SIGKILL)
        assert proc.wait(20) == -signal.SIGKILL
        saved = json.loads(state_file.read_text())["positions"][0]
        assert saved["trail"]["activeAt"] == 1.086
        assert (saved["pending"] or {}).get("sl") == (None if when == "idle" else 1.085)
        assert moves(double) == ([] if when == "before_fill" else [1.085])

        double.set_quote("EURUSD", 1.0866, 1.0867)  # the price goes on while the bridge is down
        proc = start(service, data, None)
        until("the move after the restart", lambda: sl_of(double) == 1.0856)
        until("its trade event", lambda: any(e["type"] == "position_modified" and e["sl"] == 1.0856 for e in service.events))
        assert moves(double) == after_restart
        saved = json.loads(state_file.read_text())["positions"][0]
        assert (saved["stopMoves"], saved["pending"], saved["trail"]["best"]) == (len(after_restart), None, 1.0866)
        modified = [e for e in service.events if e["type"] == "position_modified"]
        assert all(e["cause"] == "trailing_stop" and e["trailActiveAt"] == 1.086 for e in modified)
        # One event per move the broker holds, also for a move whose event the kill cut off (after_fill).
        assert sorted({e["eventId"]: e["sl"] for e in modified}.values()) == after_restart

        double.set_quote("EURUSD", 1.0868, 1.0869)  # on: the next step
        until("the next step", lambda: sl_of(double) == 1.0858)
        assert moves(double) == after_restart + [1.0858]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        service.close()
