"""`python -m es_mt5_bridge --url https://… ` (the bridge token from ES_BRIDGE_TOKEN, --token-file or --token), or
`python -m es_mt5_bridge --config es-mt5-bridge.ini` (the file of the package the service's account page hands out)."""
from __future__ import annotations

import argparse
import configparser
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
    p.add_argument("--config", help="an es-mt5-bridge.ini file ([bridge] url, token, terminal, data_dir, wait_ms, server_utc_offset); "
                   "what the command line gives wins over it")
    p.add_argument("--url", help="the service's base URL, e.g. https://signals.example.com")
    p.add_argument("--token", help="the bridge token (prefer ES_BRIDGE_TOKEN or --token-file: a command line is visible to other programs)")
    p.add_argument("--token-file", help="a file holding the bridge token")
    p.add_argument("--terminal", help="path to terminal64.exe when several terminals are installed")
    p.add_argument("--data-dir", help=f"where the exactly-once journal lives (default {default_data_dir()})")
    p.add_argument("--wait-ms", type=int, help="long-poll wait asked of the service (default 20000)")
    p.add_argument("--server-utc-offset", type=float, help="hours the broker's server clock is ahead of UTC (default: from the quotes)")
    p.add_argument("--version", action="version", version=f"es-mt5-bridge {__version__}")
    args = p.parse_args(argv)
    args.config_token = None
    apply_config(p, args)
    return args


CONFIG_KEYS = {"url": str, "config_token": str, "terminal": str, "data_dir": str, "wait_ms": int, "server_utc_offset": float}


def apply_config(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Fills what the command line left out from the config file, then the defaults; names a bad file or key."""
    if args.config:
        # No interpolation: a value is taken as written (a token or a Windows path may hold % or $).
        parser = configparser.ConfigParser(interpolation=None)
        try:
            with open(args.config, encoding="utf-8-sig") as f:
                parser.read_file(f)
        except (OSError, configparser.Error) as err:
            p.error(f"cannot read the config file {args.config}: {err}")
        if not parser.has_section("bridge"):
            p.error(f"the config file {args.config} has no [bridge] section")
        for name, value in parser.items("bridge"):
            key = "config_token" if name == "token" else name
            if key not in CONFIG_KEYS or name == "config_token":
                known = ", ".join("token" if k == "config_token" else k for k in CONFIG_KEYS)
                p.error(f"the config file {args.config}: unknown setting {name!r} (known: {known})")
            value = value.strip()
            if value == "" or getattr(args, key) is not None:
                continue
            try:
                setattr(args, key, CONFIG_KEYS[key](value))
            except ValueError:
                p.error(f"the config file {args.config}: {name} = {value!r} is not a {CONFIG_KEYS[key].__name__}")
    if not args.url:
        p.error("no service URL: pass --url, or give url in the config file")
    if args.data_dir is None:
        args.data_dir = default_data_dir()
    if args.wait_ms is None:
        args.wait_ms = 20_000


def read_token(args: argparse.Namespace) -> str:
    """The most specific source wins: --token-file, --token, the config file, then ES_BRIDGE_TOKEN (so a token
    left in the environment from an earlier setup does not override the one a fresh download wrote)."""
    token: Optional[str]
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as f:
            token = f.read().strip()
    else:
        token = args.token or args.config_token or os.environ.get("ES_BRIDGE_TOKEN")
    if not token:
        raise SystemExit("es-mt5-bridge: no bridge token: set ES_BRIDGE_TOKEN, pass --token-file or --token, or give token in the config file")
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
        bridge.manager.stop()
        # A stop-out under way finishes its closes before the terminal is let go.
        with bridge.lock:
            if bridge.journal is not None:
                bridge.journal.close()
            mt5.shutdown()
    bridge.log(sys.stderr, event="stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
