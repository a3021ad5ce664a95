"""The command line every bench shares: its own options plus `--smoke`, the same code path on
tiny sizes in seconds (bench/smoke.py runs every bench so, each under a time limit)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

SMOKE_HELP = "tiny sizes, done in seconds: the same code path, figures printed (CI runs it)"


def parser(doc: str | None = None) -> argparse.ArgumentParser:
    """A bench's argument parser (its docstring as the description), with `--smoke`."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    return ap


def parse(ap: argparse.ArgumentParser, smoke: Mapping[str, object],
          argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The options; with `--smoke`, each option named in `smoke` that the command line left
    alone takes its smoke value (one given explicitly still wins)."""
    dests = {a.dest for a in ap._actions}
    unknown = sorted(set(smoke) - dests)
    if unknown:
        raise ValueError(f"smoke sizes for options the bench lacks: {', '.join(unknown)}")
    args = ap.parse_args(argv)
    if args.smoke:
        ap.set_defaults(**smoke)
        args = ap.parse_args(argv)
    return args
