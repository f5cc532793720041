"""The in-memory ring of recent log lines: bounded, filtered by level, thread-safe, installed."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path

import pytest

from signet_desktop.daemon import daemonlog
from signet_desktop.daemon.logring import LogLine, LogRing, log_ring


def record(level: int, message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("signet_desktop.test", level, __file__, 1, message, args, None)


def test_keeps_only_the_newest_lines_in_order() -> None:
    ring = LogRing(capacity=3)
    for n in range(5):
        ring.handle(record(logging.INFO, "line %d", n))
    assert [line.message for line in ring.lines()] == ["line 2", "line 3", "line 4"]
    assert [line.seq for line in ring.lines()] == [3, 4, 5]


def test_level_filter_and_exception_summary() -> None:
    ring = LogRing()
    ring.handle(record(logging.DEBUG, "noise"))
    ring.handle(record(logging.WARNING, "careful"))
    try:
        raise ValueError("bad value")
    except ValueError:
        failing = record(logging.ERROR, "it broke")
        failing.exc_info = sys.exc_info()
        ring.handle(failing)
    assert [line.message for line in ring.lines(logging.WARNING)] == ["careful", "it broke"]
    assert ring.lines(logging.ERROR)[0].exception == "ValueError: bad value"
    assert len(ring.lines()) == 3


def test_listeners_hear_new_lines_until_they_unsubscribe() -> None:
    ring = LogRing()
    heard: list[LogLine] = []
    unsubscribe = ring.subscribe(heard.append)
    ring.handle(record(logging.INFO, "first"))
    unsubscribe()
    ring.handle(record(logging.INFO, "second"))
    assert [line.message for line in heard] == ["first"]
    unsubscribe()  # idempotent


def test_concurrent_writers_lose_nothing_below_capacity() -> None:
    ring = LogRing(capacity=10_000)
    heard: list[int] = []
    ring.subscribe(lambda line: heard.append(line.seq))

    def write(n: int) -> None:
        for i in range(500):
            ring.handle(record(logging.INFO, "w%d-%d", n, i))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seqs = [line.seq for line in ring.lines()]
    assert seqs == list(range(1, 4001))
    assert sorted(heard) == seqs


def test_install_attaches_the_ring_and_close_detaches_it(tmp_path: Path) -> None:
    ring = log_ring()
    ring.clear()
    handle = daemonlog.install(tmp_path, "info", stderr=False)
    logger = logging.getLogger("signet_desktop.test.logring")
    try:
        logger.info("while installed")
        logger.debug("below the level")
    finally:
        handle.close()
    logger.warning("after close")
    assert [line.message for line in ring.lines()] == ["while installed"]
    assert ring.lines()[0].logger == "signet_desktop.test.logring"
    # The file handler got the same line: the ring is beside it, not instead of it.
    assert "while installed" in (tmp_path / daemonlog.LOG_FILE_NAME).read_text()


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LogRing(capacity=0)
