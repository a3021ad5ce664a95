"""The suite on the machine's cores: two pytest-xdist workers per core (at most four), each
with the Redis server its own session starts; one process where workers would share a server
or gain nothing. Registered by tests/conftest.py; `-n N` on the command line still wins."""

from __future__ import annotations

import os

import pytest

from tests.support import optional_marker

MAX_WORKERS = 4  # past this the shared machine's memory and ports, not its cores, run out


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def workers(config: pytest.Config) -> int:
    """How many workers `-n auto` starts: 0 runs the tests in this process."""
    if os.environ.get("REDIS_URL"):
        return 0  # one server for every worker: each test's flushdb would empty the others'
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return 0  # a test running pytest: the run around it already uses every core
    if config.args and all("::" in arg for arg in config.args):
        return 0  # tests named one by one: starting workers costs more than they save
    if cores() < 2:
        return 0
    # two workers per core: the suite mostly waits (fakes' platform limits, real
    # subprocesses). On 2 cores, 3 workers used 1.1 cores and took 9 min (CI's limit is
    # 10), 4 workers 7 min 9 s (2026-12-06)
    return min(cores() * 2, MAX_WORKERS)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject's addopts): see workers()."""
    return workers(config)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`long` tests first: each is minutes of waiting at the fakes' real-time limits, which
    one worker spends while the others run everything else (last, the run would wait)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands its 'left out' lines to the controller, which says them once."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["left_out"] = optional_marker.left_out()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """Collect a finished worker's 'left out' lines (every worker collected every test)."""
    optional_marker.add_left_out(getattr(node, "workeroutput", {}).get("left_out", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which optional tests were left out, and how to run them (never a silent skip)."""
    optional_marker.say(terminalreporter)
