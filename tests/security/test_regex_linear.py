"""Issue 20 item 8: no regular expression in bot/ or handlers/ can be made to backtrack for
long. Python's re runs on the event loop and holds it: one "/fixture add" of 600 crafted
characters froze every platform for 20 s. Every pattern, compiled or written inline, is fed
hostile text as long as a command may be, and each call must finish well inside a bound.

The bound is a ReDoS guard, not a performance figure: a linear pattern takes well under a
millisecond on 3,000 characters; a backtracking one takes seconds to hours."""

from __future__ import annotations

import ast
import importlib
import itertools
import pkgutil
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import bot
import handlers
from bot.core.dispatch import MAX_TEXT

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (bot, handlers)
BOUND_S = 0.05  # per call, on the slowest of the machines the tests run on
CEILING_S = 1.0  # a call still running then is stopped (re checks signals while it matches)
# how each re.<call> runs its pattern: "search" (anywhere), "fullmatch" (the whole text), or
# both for a compiled one (its users may do either; match costs no more than search)
RE_CALLS = {"compile": ("search", "fullmatch"), "match": ("search",), "search": ("search",),
            "fullmatch": ("fullmatch",), "sub": ("search",), "subn": ("search",),
            "split": ("search",), "findall": ("search",), "finditer": ("search",)}
FLAGS_AT = {"compile": 1, "match": 2, "search": 2, "fullmatch": 2, "findall": 2,
            "finditer": 2, "split": 3, "sub": 4, "subn": 4}  # flags' positional index
OLD_ADD = (r"^(.+?)\s+(?:v|vs|v\.|vs\.)\s+(.+?)\s+(\d{4}-\d{2}-\d{2})\s+(\d{1,2}:\d{2})"
           r"(.*)$")
OLD_PAGE = r"^(.*?)\s*\bpage\s+(\d{1,6})\s*$"


class TooSlow(BaseException):
    """A call passed the ceiling (BaseException: no `except Exception` in the bot eats it)."""


# ------------------------------------------------------------------ every pattern there is
Found = dict[str, tuple[re.Pattern[str], tuple[str, ...]]]  # where -> (pattern, how it runs)


def compiled_patterns() -> Found:
    """Patterns held by modules and their classes, after importing every module."""
    out: Found = {}
    for pkg in PACKAGES:
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            mod = importlib.import_module(info.name)
            for name, value in vars(mod).items():
                if isinstance(value, re.Pattern):
                    out[f"{info.name}.{name}"] = value, RE_CALLS["compile"]
                elif isinstance(value, type) and value.__module__ == info.name:
                    for attr, v in vars(value).items():
                        if isinstance(v, re.Pattern):
                            out[f"{info.name}.{name}.{attr}"] = v, RE_CALLS["compile"]
    return out


def _flags(call: ast.Call, fn: str) -> int:
    node = next((k.value for k in call.keywords if k.arg == "flags"), None)
    if node is None and len(call.args) > FLAGS_AT[fn]:
        node = call.args[FLAGS_AT[fn]]
    return eval(ast.unparse(node), {"re": re}) if node is not None else 0  # noqa: S307


def source_patterns() -> tuple[Found, list[str]]:
    """Patterns written as literals in re.<call>(...) anywhere in the source (inline ones
    included), and the places where a pattern is built at run time inside a function (which
    the import walk cannot see: those must be module constants)."""
    out: Found = {}
    hidden: list[str] = []
    for pkg in PACKAGES:
        for path in sorted(Path(pkg.__path__[0]).rglob("*.py")):
            rel = path.relative_to(ROOT)
            tree = ast.parse(path.read_text())
            top_level = {id(s.value) for s in tree.body
                         if isinstance(s, ast.Assign | ast.AnnAssign) and s.value is not None}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "re":
                    hidden.append(f"{rel}:{node.lineno}: from re import (use re.<call>)")
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                        and node.func.attr in RE_CALLS and node.args):
                    continue
                pattern = node.args[0]
                if isinstance(pattern, ast.Constant) and isinstance(pattern.value, str):
                    fn = node.func.attr
                    out[f"{rel}:{node.lineno}"] = (re.compile(pattern.value, _flags(node, fn)),
                                                   RE_CALLS[fn])
                elif not (node.func.attr == "compile" and id(node) in top_level):
                    hidden.append(f"{rel}:{node.lineno}: a pattern built at run time")
    return out, hidden


def all_patterns() -> Found:
    """Every pattern of bot/ and handlers/, once each (by pattern and flags), with every
    way it is run."""
    seen: dict[tuple[str, int], str] = {}
    out: Found = {}
    for where, (p, how) in {**compiled_patterns(), **source_patterns()[0]}.items():
        first = seen.setdefault((p.pattern, p.flags), where)
        out[first] = p, tuple(sorted({*out.get(first, (p, ()))[1], *how}))
    return out


# ------------------------------------------------------------------ hostile text
def atoms(p: re.Pattern[str]) -> list[str]:
    """What to repeat: the pattern's own characters and words, separators, letters, digits."""
    words = set(re.findall(r"[A-Za-z]{2,}", p.pattern))
    found = set(" \t\n-_.:=/<>a1A") | {c for c in p.pattern if c.isprintable()}
    return sorted(found | words | {w.upper() for w in words})


def hostile(p: re.Pattern[str], n: int) -> Iterator[tuple[str, str]]:
    """(description, text of n characters) to try the pattern on."""
    fillers = (" ", "\t", "\n", "a", "1")
    words = atoms(p)
    for a in words:
        for sep in ("", " ", "  ", "\t", "\n"):
            unit = a + sep
            yield f"({a!r}+{sep!r})*", (unit * (n // len(unit) + 1))[:n]
        for fill, runs in itertools.product(fillers, (2, 3, 4)):
            # a few literals split by long runs: what lazy groups around \s+ choke on
            m = max(1, (n - runs * len(a)) // runs)
            yield f"({a!r}+{fill!r}*{m})*{runs}", ((a + fill * m) * runs)[:n]
            yield f"'a'+({a!r}+{fill!r}*{m})*{runs}", ("a" + (fill * m + a) * runs)[:n]
    own = [w for w in words if w.strip() and w in p.pattern and not w.isalnum() or len(w) > 1]
    for a, b in itertools.combinations(own, 2):
        unit = f"{a} {b} "
        yield f"({a!r} {b!r} )*", (unit * (n // len(unit) + 1))[:n]


def timed(fn: Callable[[str], object], text: str) -> float:
    """Seconds one call takes; TooSlow past the ceiling."""
    def stop(*_: object) -> None:
        raise TooSlow
    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, CEILING_S)
    try:
        t0 = time.perf_counter()
        fn(text)
        return time.perf_counter() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def slowest(p: re.Pattern[str], how: tuple[str, ...] = RE_CALLS["compile"],
            n: int = MAX_TEXT) -> tuple[float, str]:
    """The slowest call over the hostile texts, run as the code runs it (a slow one is timed
    three times and its fastest kept: a busy machine can pause any call)."""
    worst = (0.0, "")
    for what, text in hostile(p, n):
        for fn in [getattr(p, h) for h in how]:
            for t in (text, text[:-1] + "!"):  # "!" at the end: a near miss
                try:
                    took = timed(fn, t)
                    if took > BOUND_S:
                        took = min(took, timed(fn, t), timed(fn, t))
                except TooSlow:
                    return CEILING_S, f"{fn.__name__} on {what}: stopped after {CEILING_S} s"
                if took > worst[0]:
                    worst = (took, f"{fn.__name__} on {what}")
                if took > BOUND_S:
                    return worst
    return worst


PATTERNS = all_patterns()


# ------------------------------------------------------------------ the tests
def test_no_pattern_is_built_out_of_sight():
    _, hidden = source_patterns()
    assert hidden == [], "make these module constants, so this test tries them:\n" + \
        "\n".join(hidden)


def test_the_scan_finds_patterns_everywhere():
    names = set(PATTERNS)
    # module constants, an inline literal, and a Bolt listener's pattern are all seen
    assert "handlers.fixtures.commands.DATE_WORD" in names
    assert "bot.adapters.slack.listeners.actions.BUTTON_ACTION" in names
    assert any(n.startswith("bot/evidence/match_chart.py:") for n in names), names


@pytest.mark.parametrize("old", [OLD_ADD, OLD_PAGE, r"(?:inc-?)?\s*(\d{1,6})"])
def test_the_hostile_texts_catch_the_patterns_of_issue_20(old):
    took, what = slowest(re.compile(old, re.IGNORECASE))
    assert took > BOUND_S, f"{old} was quadratic or worse, and got through ({what})"


@pytest.mark.parametrize("where", sorted(PATTERNS))
def test_pattern_is_linear_on_hostile_text(where):
    p, how = PATTERNS[where]
    took, what = slowest(p, how)
    assert took <= BOUND_S, (f"{where} /{p.pattern}/ took {took * 1000:.0f} ms "
                             f"({what}, {MAX_TEXT} characters): it backtracks; rewrite it")


# ------------------------------------------------------------------ through the real core
def runs(*words: str, fill: str = " ", end: str = "x") -> str:
    """'/fixture add ' + the words split by equal runs of `fill`, MAX_TEXT characters long."""
    head = "/fixture add "
    room = MAX_TEXT - len(head) - len("".join(words)) - len(end)
    gap = (fill * room)[:room // len(words)]
    text = head + "".join(w + gap for w in words) + end
    return text + "y" * (MAX_TEXT - len(text))


@pytest.mark.parametrize("text", [
    runs("a", "v", "b"),  # froze the bot for hours
    runs("v", "v", "v", fill="\t"),
    runs("a", "vs", "b", fill=" \t", end="2026-12-02"),
    ("/fixture add" + " v" * 1500)[:MAX_TEXT - 1] + "x",
    ("/fixture add " + "West Ham v " * 300)[:MAX_TEXT - 1] + "x",
])
async def test_fixture_add_of_3000_hostile_characters_answers_at_once(say, text):
    assert len(text.strip()) == MAX_TEXT
    old = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TooSlow()))
    signal.setitimer(signal.ITIMER_REAL, 5 * CEILING_S)
    t0 = time.perf_counter()
    try:
        r = await say(text, as_="admin")
    except TooSlow:
        pytest.fail(f"/fixture add still reading after {5 * CEILING_S} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    took = time.perf_counter() - t0
    assert not r.reply.ok
    assert r.reply.text.splitlines()[0] == "Couldn't read that fixture.", r.reply.text
    assert took < CEILING_S, f"{took:.2f} s"

