"""Work in a child process: results, errors, reports and logs come back; kills and cancels
leave no process behind."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.errors import BotError, SourceError
from bot.runtime.child import Cancelled, ChildDied, ChildFailed, Children

log = logging.getLogger(__name__)


# -- work done in the child (module level: the child imports it) ----------------------------


def add(report: Callable[[Any], None], a: int, b: int) -> tuple[int, int, int]:
    for step in range(3):
        report(("adding", step, 3))
    log.info("added in %d", os.getpid())
    return a + b, os.getpid(), os.getpriority(os.PRIO_PROCESS, 0)


def refuse(report: Callable[[Any], None]) -> None:
    raise SourceError("That repository could not be cloned.", detail="exit status 128")


def crash(report: Callable[[Any], None]) -> None:
    raise ValueError("a bug")


def wait_for(report: Callable[[Any], None], flag: str) -> None:
    """Tell the parent we started, then wait until `flag` exists (never, in these tests)."""
    report(os.getpid())
    while not Path(flag).exists():
        threading.Event().wait(0.05)


# -- tests -----------------------------------------------------------------------------------


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_result_reports_and_logs_come_back_from_a_lower_priority_child(caplog):
    caplog.set_level(logging.INFO, logger=__name__)
    reports: list[Any] = []
    total, pid, priority = Children(nice=5).run(add, (2, 3), on_report=reports.append)
    assert total == 5
    assert pid != os.getpid()
    assert priority >= os.getpriority(os.PRIO_PROCESS, 0) + 5 or priority == 19
    assert reports == [("adding", 0, 3), ("adding", 1, 3), ("adding", 2, 3)]
    [record] = [r for r in caplog.records if r.name == __name__]
    assert record.getMessage() == f"added in {pid}" and record.process == pid


def test_a_bot_error_keeps_its_class_sentence_and_detail():
    with pytest.raises(SourceError) as caught:
        Children().run(refuse, ())
    assert caught.value.user_message == "That repository could not be cloned."
    assert caught.value.detail == "exit status 128"


def test_a_bug_in_the_child_is_a_child_failed_with_its_traceback_logged(caplog):
    with pytest.raises(ChildFailed, match="ValueError: a bug"):
        Children().run(crash, ())
    logged = [r for r in caplog.records if r.name == "bot.runtime.child"]
    assert logged and "ValueError: a bug" in (logged[0].exc_text or "")


def test_a_killed_child_is_one_sentence_that_says_how(tmp_path):
    def kill(pid: Any) -> None:
        os.kill(pid, signal.SIGKILL)

    with pytest.raises(ChildDied) as caught:
        Children().run(wait_for, (str(tmp_path / "never"),), on_report=kill)
    message = caught.value.user_message
    assert "(killed by SIGKILL)" in message and "\n" not in message
    assert isinstance(caught.value, BotError)


def test_cancel_stops_the_child_and_refuses_new_work(tmp_path):
    children = Children(grace=30)
    started: list[int] = []
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            children.run(wait_for, (str(tmp_path / "never"),), on_report=started.append)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    while not started and thread.is_alive():
        threading.Event().wait(0.02)
    assert children.pids() == started
    children.cancel()
    thread.join(60)
    assert not thread.is_alive()
    assert [type(e) for e in outcome] == [Cancelled]
    assert _gone(started[0]) and children.pids() == []
    with pytest.raises(Cancelled):
        children.run(add, (1, 1))


def test_an_exception_in_the_parents_report_handler_stops_the_child(tmp_path):
    pids: list[int] = []

    def interrupted(pid: Any) -> None:
        pids.append(pid)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Children(grace=30).run(wait_for, (str(tmp_path / "never"),), on_report=interrupted)
    assert _gone(pids[0])
