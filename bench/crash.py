"""Crash benchmark: kill -9 the real bot mid-burst (30 final form taps + 30 one-line reports),
restart it, and count what was lost or doubled. Prints `name: value` lines (goal: all 0).
The run itself is rigs/crash.py (tests/delivery/test_crash.py runs it too).
Usage: python bench/crash.py [--kill-after N] [--settle S] [--no-archive] [--taps N]
[--lines N] [--smoke]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from rigs.crash import main  # noqa: E402

SMOKE = {"taps": 4, "lines": 4, "kill_after": 3, "settle": 12.0}

if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--kill-after", type=int, default=8)
    ap.add_argument("--settle", type=float, default=60.0)
    ap.add_argument("--no-archive", action="store_true")
    ap.add_argument("--taps", type=int, default=30, help="final form taps in the burst")
    ap.add_argument("--lines", type=int, default=30, help="one-line reports in the burst")
    a = cli.parse(ap, SMOKE)
    asyncio.run(main(a.kill_after, a.settle, not a.no_archive, a.taps, a.lines))
