"""Crash benchmark: kill -9 the real bot mid-burst (30 final form taps + 30 one-line reports),
restart it, and count what was lost or doubled. Prints `name: value` lines (goal: all 0).
The run itself is rigs/crash.py (tests/delivery/test_crash.py runs it too).
Usage: python bench/crash.py [--kill-after N] [--settle S] [--no-archive]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rigs.crash import main  # noqa: E402

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--kill-after", type=int, default=8)
    ap.add_argument("--settle", type=float, default=60.0)
    ap.add_argument("--no-archive", action="store_true")
    a = ap.parse_args()
    asyncio.run(main(a.kill_after, a.settle, not a.no_archive))
