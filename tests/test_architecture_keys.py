"""One way to build a Redis key: every `md:` key prefix is made in bot/store/base.py (the key
schema) from a key space, so a club's store builds only that club's keys."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.source_tree import ROOT

# Where a key literal may be written: the key schema and the table of script keys.
KEY_HOMES = {"bot/store/base.py", "bot/store/keys.py"}
# Python trees that talk to Redis (bot, its domain homes, the rigs and benches that drive it).
TREES = ("bot", "handlers", "rigs", "bench")
# The prefix functions of base.py and how many arguments make a call name its key space.
PREFIX_ARITY = {"tag_prefix": 2, "ops_prefix": 1, "fx_prefix": 2, "chat_prefix": 3,
                "bot_prefix": 3, "platform_prefix": 2}


def _starts_a_key(node: ast.AST) -> bool:
    """A string constant, or an f-string whose text begins, with `md:`."""
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
    return isinstance(node, ast.Constant) and isinstance(node.value, str) \
        and node.value.startswith("md:")


def key_literals(source: str) -> list[int]:
    """Lines of a module's source where a key literal (`"md:...`) is written."""
    tree = ast.parse(source)
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    return sorted({n.lineno for n in ast.walk(tree)
                   if id(n) not in inner and _starts_a_key(n)})


def spaceless_calls(source: str) -> list[int]:
    """Lines calling a prefix function without a key space (the no-club keys by default),
    or naming OPS, the single-club deployment's shared prefix."""
    out = set()
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in PREFIX_ARITY \
                and len(n.args) + len(n.keywords) < PREFIX_ARITY[n.func.id]:
            out.add(n.lineno)
        if isinstance(n, ast.Name) and n.id == "OPS" or \
                isinstance(n, ast.alias) and n.name == "OPS":
            out.add(getattr(n, "lineno", 0))
    return sorted(out)


def sources(trees: tuple[str, ...]) -> dict[str, Path]:
    """Every Python file of these trees by its path from the root."""
    return {p.relative_to(ROOT).as_posix(): p
            for top in trees for p in sorted((ROOT / top).rglob("*.py"))}


def test_no_key_literal_outside_the_key_schema():
    found = {rel: lines for rel, path in sources(TREES).items()
             if rel not in KEY_HOMES and (lines := key_literals(path.read_text()))}
    assert found == {}, "build keys with bot/store/base.py's prefix functions"


def test_the_store_names_its_key_space_in_every_key_it_builds():
    found = {rel: lines for rel, path in sources(("bot", "handlers")).items()
             if rel != "bot/store/base.py" and (lines := spaceless_calls(path.read_text()))}
    assert found == {}, "pass the key space (self.space, gateway.space) to the prefix"


def test_the_key_literal_finder_finds_literals_and_f_strings():
    code = '''
A = "md:{ops}:x"
def f(t, n):
    b = f"md:{{{t}}}:notice:{n}"
    c = "the md: prefix"  # prose, not a key
    return r.scan_iter(match=f"md:*:msg:{n}")
'''
    assert key_literals(code) == [2, 4, 6]


def test_the_space_check_finds_a_prefix_built_without_its_space():
    code = '''
from bot.store.base import OPS, fx_prefix
a = fx_prefix(fx)
b = fx_prefix(fx, self.space)
c = chat_prefix("telegram", chat)
d = ops_prefix(space=s)
'''
    assert spaceless_calls(code) == [2, 3, 5]
