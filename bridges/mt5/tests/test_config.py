"""The config file the service's download writes (es-mt5-bridge.ini): read as written, the command line first."""
from __future__ import annotations

from typing import Any

import pytest

from es_mt5_bridge.__main__ import parse_args, read_token


def ini(tmp_path: Any, body: str) -> str:
    path = tmp_path / "es-mt5-bridge.ini"
    path.write_text(body, encoding="utf-8")
    return str(path)


def test_when_the_config_file_gives_every_setting_then_the_bridge_takes_them_as_written(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("ES_BRIDGE_TOKEN", raising=False)
    path = ini(tmp_path, "[bridge]\n# a comment\nurl = https://signals.example.com\ntoken = brg_a%b$c\n"
                         "terminal = C:\\Program Files\\Broker MetaTrader 5\\terminal64.exe\nwait_ms = 5000\n"
                         "server_utc_offset = 2.5\ndata_dir =\n")
    args = parse_args(["--config", path])
    assert args.url == "https://signals.example.com"
    assert read_token(args) == "brg_a%b$c"
    assert args.terminal == "C:\\Program Files\\Broker MetaTrader 5\\terminal64.exe"
    assert args.wait_ms == 5000 and args.server_utc_offset == 2.5
    assert args.data_dir.endswith("es-mt5-bridge")


def test_when_the_command_line_gives_a_setting_then_it_wins_and_the_files_token_wins_over_the_environment(tmp_path: Any, monkeypatch: Any) -> None:
    path = ini(tmp_path, "[bridge]\nurl = https://a.example.com\ntoken = brg_from_file\n")
    monkeypatch.setenv("ES_BRIDGE_TOKEN", "brg_old_from_environment")
    args = parse_args(["--config", path, "--url", "https://b.example.com"])
    assert args.url == "https://b.example.com"
    assert read_token(args) == "brg_from_file"
    assert read_token(parse_args(["--config", path, "--token", "brg_cli"])) == "brg_cli"
    assert read_token(parse_args(["--url", "https://a.example.com"])) == "brg_old_from_environment"


@pytest.mark.parametrize("body, says", [
    ("url = x\n", "cannot read the config file"),
    ("[other]\nurl = x\n", "no [bridge] section"),
    ("[bridge]\nurl = x\nport = 1\n", "unknown setting 'port'"),
    ("[bridge]\nurl = x\nwait_ms = soon\n", "wait_ms = 'soon' is not a int"),
    ("[bridge]\ntoken = brg_x\n", "no service URL"),
])
def test_when_the_config_file_is_wrong_then_the_bridge_stops_and_names_what(tmp_path: Any, capsys: Any, body: str, says: str) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--config", ini(tmp_path, body)])
    assert says in capsys.readouterr().err
