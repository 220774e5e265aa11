"""The service side of the bridge: HTTPS calls to the ingress with the bridge token (standard library only)."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, List, NamedTuple, Optional

from . import __version__


class IngressError(Exception):
    """The ingress could not be reached or answered something other than 200. `status` is None for network errors."""

    def __init__(self, what: str, status: Optional[int], detail: str, retry_after: Optional[float] = None) -> None:
        super().__init__(f"{what}: {'HTTP ' + str(status) if status is not None else 'connection failed'} {detail}".strip())
        self.status = status
        #: Seconds the service asked to wait (429 Retry-After), if it said.
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.status is None or self.status == 429 or self.status >= 500


class Poll(NamedTuple):
    """One answer of the long-poll."""
    commands: List[Any]
    server_time: Optional[str]
    # A newer long-poll of the account took over.
    superseded: bool
    # The answer's `stopOut` as sent (protocol 1.4), None when it has none: the owner has the stop-out off.
    stop_out: Any


class Ingress:
    def __init__(self, base_url: str, token: str) -> None:
        self._base = base_url.rstrip("/")
        self._token = token

    def __repr__(self) -> str:  # never the token
        return f"Ingress({self._base!r})"

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]], timeout: float) -> Dict[str, Any]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self._base + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + self._token)
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", f"es-mt5-bridge/{__version__}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as err:
            detail = ""
            try:
                detail = str(json.loads(err.read().decode("utf-8")).get("error", ""))[:200]
            except Exception:
                pass
            retry_after: Optional[float] = None
            try:
                retry_after = min(float(err.headers.get("Retry-After", "")), 300.0)
            except (TypeError, ValueError):
                pass
            raise IngressError(f"{method} {path}", err.code, detail, retry_after) from None
        except (urllib.error.URLError, OSError, TimeoutError) as err:
            raise IngressError(f"{method} {path}", None, str(getattr(err, "reason", err))[:200]) from None
        try:
            parsed = json.loads(text) if text else {}
        except ValueError:
            raise IngressError(f"{method} {path}", 200, "the answer is not JSON") from None
        if not isinstance(parsed, dict):
            raise IngressError(f"{method} {path}", 200, "the answer is not an object")
        return parsed

    def hello(self, body: Dict[str, Any]) -> Dict[str, Any]:
        return self._call("POST", "/bridge/v1/hello", body, 30)

    def commands(self, wait_ms: int) -> Poll:
        answer = self._call("GET", f"/bridge/v1/commands?waitMs={int(wait_ms)}", None, wait_ms / 1000 + 15)
        commands = answer.get("commands")
        if not isinstance(commands, list):
            raise IngressError("GET /bridge/v1/commands", 200, "the answer has no commands array")
        server_time = answer.get("serverTime")
        return Poll(commands, server_time if isinstance(server_time, str) else None, answer.get("superseded") is True,
                    answer.get("stopOut"))

    def reports(self, reports: List[Dict[str, Any]], account: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
        """Reports, with the account's figures (protocol 1.2); no report and only figures is a heartbeat."""
        body: Dict[str, Any] = {"reports": reports}
        if account is not None:
            body["account"] = account
        answer = self._call("POST", "/bridge/v1/reports", body, 30)
        results = answer.get("results")
        return results if isinstance(results, list) else []

    def trades(self, events: List[Dict[str, Any]], book: Optional[Dict[str, Any]],
               account: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Trade events and the book (protocol 1.5); the answer says per eventId what became of each."""
        body: Dict[str, Any] = {}
        if events:
            body["events"] = events
        if book is not None:
            body["book"] = book
        if account is not None:
            body["account"] = account
        return self._call("POST", "/bridge/v1/trades", body, 30)

    def events(self, events: List[Dict[str, Any]], account: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
        """Events on the reports call, with no report (protocol 1.4); the answer's `events` acknowledge them by eventId."""
        body: Dict[str, Any] = {"reports": [], "events": events}
        if account is not None:
            body["account"] = account
        answer = self._call("POST", "/bridge/v1/reports", body, 30)
        acknowledged = answer.get("events")
        return acknowledged if isinstance(acknowledged, list) else []
