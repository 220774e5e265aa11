from __future__ import annotations

import os

import pytest

from es_mt5_bridge.journal import Journal, JournalLocked
from es_mt5_bridge.protocol import Report


def clock() -> str:
    return "2026-11-23T12:00:00.000Z"


def test_when_the_bridge_restarts_then_reports_and_intents_are_read_back_and_the_first_report_wins(tmp_path) -> None:
    path = str(tmp_path / "journal.jsonl")
    j = Journal(path, clock)
    j.record_intent("a")
    j.record_report(Report(commandId="a", status="filled", ticket="1"))
    kept = j.record_report(Report(commandId="a", status="rejected", retcode=10016))
    j.record_intent("b")
    j.close()
    assert kept.status == "filled"
    again = Journal(path, clock)
    a, b = again.get("a"), again.get("b")
    assert a is not None and a.report is not None and a.report.ticket == "1" and a.intent_at == clock()
    assert b is not None and b.intent_at == clock() and b.report is None
    assert again.get("c") is None


def test_when_the_last_line_was_cut_by_a_crash_then_the_lines_before_it_still_count(tmp_path) -> None:
    path = str(tmp_path / "journal.jsonl")
    j = Journal(path, clock)
    j.record_report(Report(commandId="a", status="done"))
    j.close()
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"event":"report","commandId":"b","rep')
    again = Journal(path, clock)
    assert again.get("a") is not None and again.get("b") is None


def test_when_a_second_bridge_opens_the_same_journal_then_it_is_refused(tmp_path) -> None:
    path = str(tmp_path / "journal.jsonl")
    first = Journal(path, clock)
    with pytest.raises(JournalLocked):
        Journal(path, clock)
    first.close()
    Journal(path, clock).close()
    assert os.path.exists(path + ".lock")
