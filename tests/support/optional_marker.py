"""A marker for tests that need what the Quick start does not install (browsers, the voice
extra): left out of a plain run, and said to be, never silently skipped; asked for with
`-m <marker>`, they run (and each fails with one line if what it needs is missing)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

# marker name -> the summary line saying how many were left out, in this process; a parallel
# run's workers each collect every test, so the controller keeps one line per marker
_LEFT_OUT: dict[str, str] = {}


class OptionalMarker:
    """The rule of one such marker, for a conftest's collection and summary hooks."""

    def __init__(self, name: str, needs: str, install: str,
                 ready: Callable[[], bool] = lambda: False) -> None:
        self.name = name
        self.needs = needs  # what they need, as said in the summary line
        self.install = install  # how to install it
        self.ready = ready  # True: installed here, so they run in a plain run too
        self.left_out = 0

    @property
    def run(self) -> str:
        """How to run them."""
        return f"python -m pytest -m {self.name}"

    def leave_out(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Deselect the marked tests unless they can run here or `-m` names the marker."""
        if self.ready() or self.name in (config.option.markexpr or ""):
            return
        out = [i for i in items if i.get_closest_marker(self.name)]
        if out:
            items[:] = [i for i in items if not i.get_closest_marker(self.name)]
            config.hook.pytest_deselected(items=out)
            self.left_out += len(out)
            _LEFT_OUT[self.name] = (
                f"{self.left_out} {self.name} tests not run (they need {self.needs}): "
                f"{self.install} && {self.run}")


def left_out() -> dict[str, str]:
    """This process's summary lines, by marker (what a worker hands to the controller)."""
    return dict(_LEFT_OUT)


def add_left_out(lines: dict[str, str]) -> None:
    """Take a worker's summary lines (each marker once, however many workers said it)."""
    _LEFT_OUT.update(lines)


def say(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per marker whose tests were left out: how many, and how to run them."""
    for _, line in sorted(_LEFT_OUT.items()):
        terminalreporter.write_line(line)
