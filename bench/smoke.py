"""Every bench in smoke mode (`--smoke`: tiny sizes, seconds), one after another, each under
a time limit. Prints each bench's output, then one line per bench (name, seconds, ok or
FAILED with its exit code, or TIMEOUT) and exits 1 if any failed, ran out of time or printed
no `name: value` figure. A bench that hangs or crashes fails CI here.

    python -m bench.smoke [--limit 120] [NAME ...]

A NAME is a bench (bench/NAME.py) or a case of CASES: a bench with options of its own
(saturday-clubs: bench/saturday.py --smoke --clubs 2).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# modules the benches use: not benches
LIBRARIES = frozenset({"rig", "cli", "smoke", "nights", "ground_evacuation"})
# a bench run again with options of its own, under a name of its own: (bench, its options)
CASES = {"saturday-clubs": ("saturday", ("--clubs", "2"))}
FIGURE = re.compile(r"^\s*[A-Za-z][\w.-]*: \S", re.M)


def benches() -> list[Path]:
    """Every bench script (bench/*.py but the libraries), by name."""
    return sorted(p for p in BENCH.glob("*.py") if p.stem not in LIBRARIES)


@dataclass(frozen=True)
class Outcome:
    """How one bench's smoke run ended."""

    name: str
    seconds: float
    code: int | None  # None: killed at the time limit
    figures: int

    @property
    def ok(self) -> bool:
        return self.code == 0 and self.figures > 0

    def line(self) -> str:
        if self.code is None:
            verdict = "TIMEOUT (killed)"
        elif self.code != 0:
            verdict = f"FAILED (exit {self.code})"
        elif not self.figures:
            verdict = "FAILED (no figures printed)"
        else:
            verdict = f"ok ({self.figures} figures)"
        return f"{self.name:<16} {self.seconds:6.1f} s  {verdict}"


def runs() -> dict[str, tuple[Path, tuple[str, ...]]]:
    """Every smoke run by name: each bench as it is, then the CASES (bench, options)."""
    out = {p.stem: (p, ()) for p in benches()}
    for name, (bench, options) in CASES.items():
        out[name] = (BENCH / f"{bench}.py", options)
    return out


def run(bench: Path, limit: float, options: tuple[str, ...] = (), name: str = "") -> Outcome:
    """One bench with --smoke (and `options`), its output shown as it comes; the whole
    process group is killed at `limit` seconds (a bench starts Redis servers, bots and
    browsers)."""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(bench), "--smoke", *options],
                            cwd=BENCH.parent,
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    out: list[str] = []
    try:
        code: int | None = _follow(proc, out, t0 + limit)
    finally:
        _stop_group(proc)
    figures = len(FIGURE.findall("".join(out)))
    return Outcome(name or bench.stem, time.monotonic() - t0, code, figures)


def _follow(proc: subprocess.Popen[bytes], out: list[str], deadline: float) -> int | None:
    """Echo the bench's output until it exits (its code) or the deadline passes (None)."""
    import selectors

    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    while (left := deadline - time.monotonic()) > 0:
        if not sel.select(timeout=min(left, 1.0)):
            continue
        chunk = os.read(fd, 65536)  # never blocks past the deadline on a half-written line
        if not chunk:  # closed: it has exited (or closed its output: wait out the limit)
            try:
                return proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                return None
        text = chunk.decode(errors="replace")
        out.append(text)
        sys.stdout.write(text)
        sys.stdout.flush()
    return None


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """End the bench and everything it started (its own process group), TERM then KILL."""
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        if sig is signal.SIGTERM:
            try:  # the bench is gone; what it started goes too
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break


def main() -> int:
    """Run the benches named (default: all) and print the verdicts."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="benches to run (default: every one)")
    ap.add_argument("--limit", type=float, default=120.0, help="seconds per bench")
    a = ap.parse_args()
    known = runs()
    unknown = [n for n in a.names if n not in known]
    if unknown:
        ap.error(f"no such bench: {', '.join(unknown)} (there are: {', '.join(known)})")
    outcomes = []
    t0 = time.monotonic()
    for name in a.names or list(known):
        bench, options = known[name]
        print(f"== bench/{bench.name} --smoke {' '.join(options)}".rstrip(), flush=True)
        outcomes.append(run(bench, a.limit, options, name))
        print(f"== {outcomes[-1].line()}", flush=True)
    print("\nbench smoke runs:")
    for o in outcomes:
        print(f"  {o.line()}")
    failed = [o.name for o in outcomes if not o.ok]
    print(f"total: {time.monotonic() - t0:.1f} s, {len(outcomes) - len(failed)} ok"
          + (f", failed: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
