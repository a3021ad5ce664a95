"""Start-up: seconds from `matchday run --as steward` to the console's ready line, and RSS.

Each run uses a fresh data dir with the embedded Redis server (already installed in the venv).
Prints `startup_s` (median of --runs, 5), `rss_mb` at the ready line, and `ratio_vs_bare_python`
(the same measurement for `python -c` printing a line, a baseline taken in this run).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402

READY = "Matchday Ops on"


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _time_to_line(argv: list[str], ready: str, env: dict[str, str]) -> tuple[float, float]:
    """(seconds until a stdout line containing `ready`, RSS MB then)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        for line in proc.stdout:
            if ready in line:
                elapsed = time.perf_counter() - t0
                rss = _rss_mb(proc.pid)
                break
        else:
            raise SystemExit(f"no ready line from {argv}")
        try:
            proc.stdin.write("/quit\n")
            proc.stdin.close()
        except BrokenPipeError:
            pass  # it has already exited (the bare-python baseline)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return elapsed, rss


def main() -> None:
    """Measure and print."""
    ap = cli.parser(__doc__)
    ap.add_argument("--runs", type=int, default=5, help="start-ups measured (the median)")
    runs_n = cli.parse(ap, {"runs": 1}).runs
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL",
                                                                     "TELEGRAM_", "SLACK_"))}
    bare = [_time_to_line([sys.executable, "-c", "print('ready')"], "ready", env)[0]
            for _ in range(runs_n)]
    runs = []
    for _ in range(runs_n):
        with tempfile.TemporaryDirectory() as tmp:
            run_env = env | {"MATCHDAY_DATA_DIR": tmp}
            runs.append(_time_to_line([sys.executable, "-m", "bot.cli", "run", "--as",
                                       "steward"], READY, run_env))
    startup = statistics.median(r[0] for r in runs)
    print(f"startup_s: {startup:.2f}")
    print(f"rss_mb: {statistics.median(r[1] for r in runs):.1f}")
    print(f"bare_python_s: {statistics.median(bare):.3f}")
    print(f"ratio_vs_bare_python: {startup / statistics.median(bare):.1f}")


if __name__ == "__main__":
    main()
