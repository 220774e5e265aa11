"""`python -m es_mt5_bridge --url https://… ` (the bridge token from ES_BRIDGE_TOKEN, --token-file or --token)."""
from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any, List, Optional

from . import __version__
from .bridge import Bridge, Stop, utcnow
from .ingress import Ingress
from .journal import Journal, JournalLocked
from .protocol import iso


def default_data_dir() -> str:
    base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "es-mt5-bridge")


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="es-mt5-bridge", description="External Signals bridge for MetaTrader 5")
    p.add_argument("--url", required=True, help="the service's base URL, e.g. https://signals.example.com")
    p.add_argument("--token", help="the bridge token (prefer ES_BRIDGE_TOKEN or --token-file: a command line is visible to other programs)")
    p.add_argument("--token-file", help="a file holding the bridge token")
    p.add_argument("--terminal", help="path to terminal64.exe when several terminals are installed")
    p.add_argument("--data-dir", default=default_data_dir(), help="where the exactly-once journal lives (default %(default)s)")
    p.add_argument("--wait-ms", type=int, default=20_000, help="long-poll wait asked of the service (default 20000)")
    p.add_argument("--server-utc-offset", type=float, help="hours the broker's server clock is ahead of UTC (default: from the quotes)")
    p.add_argument("--version", action="version", version=f"es-mt5-bridge {__version__}")
    return p.parse_args(argv)


def read_token(args: argparse.Namespace) -> str:
    token = os.environ.get("ES_BRIDGE_TOKEN") or args.token
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as f:
            token = f.read().strip()
    if not token:
        raise SystemExit("es-mt5-bridge: no bridge token: set ES_BRIDGE_TOKEN, or pass --token-file or --token")
    return token


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    token = read_token(args)
    try:
        import MetaTrader5 as mt5  # noqa: N813 (the package's own name)
    except ImportError:
        sys.stderr.write("es-mt5-bridge: the MetaTrader5 package is missing: pip install MetaTrader5 (Windows only)\n")
        return 2
    data_dir = args.data_dir

    def journal_for(login: int) -> Journal:
        return Journal(os.path.join(data_dir, f"journal-{login}.jsonl"), lambda: iso(utcnow()))

    bridge = Bridge(mt5, Ingress(args.url, token), journal_for, terminal_path=args.terminal, wait_ms=args.wait_ms,
                    server_utc_offset=None if args.server_utc_offset is None else int(args.server_utc_offset * 3600))

    def on_signal(signum: int, _frame: Any) -> None:
        bridge.running = False
        if not bridge.busy:
            raise Stop()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    bridge.log(sys.stderr, event="started", url=args.url, version=__version__, dataDir=data_dir)
    try:
        bridge.run()
    except Stop:
        pass
    except JournalLocked as err:
        sys.stderr.write(f"es-mt5-bridge: {err}\n")
        return 2
    finally:
        bridge.watch.stop()
        # A stop-out under way finishes its closes before the terminal is let go.
        with bridge.lock:
            if bridge.journal is not None:
                bridge.journal.close()
            mt5.shutdown()
    bridge.log(sys.stderr, event="stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
