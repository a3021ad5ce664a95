"""Compare the benches on an older commit and on this tree, in one run on one machine.

Checks the ref out into a temporary git worktree and runs each bench alternately on the old
tree and on this one (round 1: old then new; round 2: new then old; …), each in its own
process with PYTHONPATH and the working directory on its tree (so the bot processes a bench
starts import that tree too), reusing this venv. Then prints every `name: value` figure side
by side: the old and new values (the mean over rounds), new/old, and whether new is at least
as good (`ok`), worse (`WORSE`), or a count the bench reports for information (`·`).

    .venv/bin/python bench/compare.py [--ref a3d723e] [--benches flashpoint crash failover web]
        [--rounds 1] [--args 'flashpoint=--reports 60 --seconds 12'] [--tolerance 0.05]
    .venv/bin/python bench/compare.py --smoke    # pack --smoke on HEAD and on this tree

`--own-venv` builds a venv for the old tree (pip install -e '.[test]' into the temporary
worktree) when its dependencies differ from this one's. Exit status 0 (a report, not a
gate), 2 when a bench failed to run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SESSION_START = "a3d723e"  # main when this session started
BENCHES = ("flashpoint", "crash", "failover", "web")
HIGHER = ("per_s", "ratio_reports_with", "ratio_acked")  # checked first: higher is better
LOWER = ("lost", "reused", "429", "never", "repeated", "dup", "not_logged", "unavailable",
         "wait", "gap")
HIGHER_COUNTS = ("acked", "incidents_logged", "delivered", "events_received", "recorded")
LOWER_TIMES = ("_ms", "_s", "p50", "p95", "ratio")


def better(name: str) -> int:
    """+1 when a higher figure is better, -1 when lower is, 0 for a count given for
    information (reports sent, screens, inputs, and a bench's own baseline, e.g. failover's
    run without WAIT: a yardstick inside the run, not the change). First matching rule wins."""
    if name.startswith("baseline_"):
        return 0
    for words, sign in ((HIGHER, 1), (LOWER, -1), (HIGHER_COUNTS, 1)):
        if any(w in name for w in words):
            return sign
    if any(name.endswith(w) or f"{w}_" in name for w in LOWER_TIMES):
        return -1
    return 0


def figures(text: str) -> dict[str, float]:
    """The numeric `name: value` lines of a bench's output."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(": ")
        if not sep or " " in name.strip():
            continue
        try:
            out[name.strip()] = float(value.split()[0])
        except (ValueError, IndexError):
            continue
    return out


@dataclass
class Side:
    """One tree's runs of one bench."""

    runs: list[dict[str, float]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    failed: str = ""

    def mean(self, name: str) -> float | None:
        """The mean of a figure over the runs that printed it."""
        vals = [r[name] for r in self.runs if name in r]
        return sum(vals) / len(vals) if vals else None


@contextmanager
def old_tree(ref: str) -> Iterator[Path]:
    """A temporary detached worktree of `ref`, removed after."""
    where = Path(tempfile.mkdtemp(prefix="md-compare-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                    str(where), ref], check=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
                       check=False)
        shutil.rmtree(where.parent, ignore_errors=True)


def own_venv(tree: Path) -> str:
    """A venv for the old tree, its package installed from it; its python."""
    venv = tree.parent / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "-e", f"{tree}[test]"], check=True)
    return py


def check_imports(python: str, tree: Path) -> None:
    """Fail early unless `python` with PYTHONPATH on `tree` imports bot/ and rigs/ from it."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    found = subprocess.run([python, "-c", "import bot, rigs; print(bot.__file__, rigs.__file__)"],
                           cwd=tree, env=env, capture_output=True, text=True, check=True)
    paths = [Path(p) for p in found.stdout.split()]
    if not all(p.is_relative_to(tree) for p in paths):
        raise SystemExit(f"{python} imports {paths} instead of {tree}'s: try --own-venv")


def run_bench(python: str, tree: Path, bench: str, args: list[str], timeout: float,
              side: Side, label: str) -> None:
    """Run one bench on one tree; add its figures and wall time to `side`."""
    script = tree / "bench" / f"{bench}.py"
    if not script.exists():
        side.failed = f"no bench/{bench}.py at {label}"
        return
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONUNBUFFERED": "1"}
    t0 = time.monotonic()
    try:
        done = subprocess.run([python, str(script), *args], cwd=tree, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        side.failed = f"timed out after {timeout:.0f} s"
        return
    took = time.monotonic() - t0
    print(f"  {bench} on {label}: {took:.0f} s, exit {done.returncode}", flush=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        side.failed = f"exit {done.returncode}: " + " | ".join(tail)
        return
    side.runs.append(figures(done.stdout))
    side.seconds.append(took)


def verdict(name: str, old: float | None, new: float | None, tolerance: float) -> str:
    """ok / WORSE / · (information) for one figure."""
    sign = better(name)
    if old is None or new is None or sign == 0:
        return "·"
    slack = abs(old) * tolerance
    worse = new > old + slack if sign < 0 else new < old - slack
    return "WORSE" if worse else "ok"


def table(bench: str, old: Side, new: Side, tolerance: float) -> list[str]:
    """The side-by-side lines of one bench."""
    lines = [f"== {bench}  (old {_secs(old)}, new {_secs(new)})"]
    for side, label in ((old, "old"), (new, "new")):
        if side.failed:
            lines.append(f"   {label} FAILED: {side.failed}")
    names = list(dict.fromkeys(n for s in (old, new) for r in s.runs for n in r))
    width = max((len(n) for n in names), default=10)
    for name in names:
        a, b = old.mean(name), new.mean(name)
        ratio = f"{b / a:.3f}" if a not in (None, 0) and b is not None else "-"
        lines.append(f"   {name:<{width}}  {_num(a):>10}  {_num(b):>10}  {ratio:>7}  "
                     f"{verdict(name, a, b, tolerance)}")
    return lines


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def _secs(side: Side) -> str:
    return "/".join(f"{s:.0f}s" for s in side.seconds) or "-"


def main() -> int:
    """Run the comparison and print it; 2 if a bench failed on either tree."""
    ap = cli.parser(__doc__)
    ap.add_argument("--ref", default=SESSION_START, help="the old commit (default: %(default)s)")
    ap.add_argument("--benches", nargs="+", default=list(BENCHES))
    ap.add_argument("--rounds", type=int, default=1, help="runs per tree, order alternating")
    ap.add_argument("--args", action="append", default=[], metavar="BENCH=ARGS",
                    help="extra arguments for one bench, e.g. 'web=--reports 500'")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per bench run")
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="how much worse still counts as noise (a fraction of old)")
    ap.add_argument("--own-venv", action="store_true", help="a venv of its own for the ref")
    # smoke: the whole comparison (worktree, both trees, table) on one quick bench, HEAD
    # against this tree (an older ref's benches may lack --smoke)
    a = cli.parse(ap, {"ref": "HEAD", "benches": ["pack"], "args": ["pack=--smoke"],
                       "timeout": 60.0})
    extra = {k: shlex.split(v) for k, _, v in (s.partition("=") for s in a.args)}
    report: list[str] = []
    failed = False
    with old_tree(a.ref) as tree:
        old_py = own_venv(tree) if a.own_venv else sys.executable
        check_imports(old_py, tree)
        check_imports(sys.executable, ROOT)
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        print(f"old: {a.ref} at {tree}; new: this tree ({ROOT}, HEAD {head}"
              f"{', with uncommitted changes' if _dirty() else ''})", flush=True)
        for bench in a.benches:
            old, new = Side(), Side()
            for r in range(a.rounds):
                order = [("old", old_py, tree, old), ("new", sys.executable, ROOT, new)]
                for label, py, where, side in order if r % 2 == 0 else order[::-1]:
                    if not side.failed:
                        run_bench(py, where, bench, extra.get(bench, []), a.timeout, side,
                                  label)
            failed |= bool(old.failed or new.failed)
            report += table(bench, old, new, a.tolerance)
    print("\nfigure  old  new  new/old  verdict (mean of each tree's runs)")
    print("\n".join(report))
    return 2 if failed else 0


def _dirty() -> bool:
    return bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    sys.exit(main())
