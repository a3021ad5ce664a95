"""Decisions on typed values, not strings (issue 33): guided forms found through a registry,
not an if-chain over their kinds; no incident id searched for in message text."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.source_tree import ROOT, modules

INCIDENT_PATTERN = re.compile(r"INC-")
FORM_STATE = ("state", "form")  # what the handlers call a guided form's saved state


def _kind_lookup(node: ast.expr) -> bool:
    """`state.get("kind")` or `state["kind"]`: the kind of a guided form's saved state."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get" and node.args:
        owner, key = node.func.value, node.args[0]
    elif isinstance(node, ast.Subscript):
        owner, key = node.value, node.slice
    else:
        return False
    return isinstance(owner, ast.Name) and owner.id in FORM_STATE \
        and isinstance(key, ast.Constant) and key.value == "kind"


def form_kind_dispatch(path: Path) -> list[str]:
    """`line: code` of each `kind == …` test of a form state against a literal, and of each
    function testing a form state's kind for equality with two or more things (an if-chain
    over form kinds)."""
    tree = ast.parse(path.read_text())
    found: dict[str, None] = {}  # in order, once (a nested function is walked twice)
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        against: dict[str, int] = {}
        for node in ast.walk(fn):
            if not isinstance(node, ast.Compare) or len(node.ops) != 1 \
                    or not isinstance(node.ops[0], ast.Eq | ast.In):
                continue
            left, right = node.left, node.comparators[0]
            if _kind_lookup(right):
                left, right = right, left
            if not _kind_lookup(left):
                continue
            if isinstance(right, ast.Constant) or isinstance(node.ops[0], ast.In):
                found[f"{node.lineno}: {ast.unparse(node)}"] = None
            against.setdefault(ast.unparse(right), node.lineno)
        if len(against) > 1:
            found[f"{fn.lineno}: {fn.name} tells forms apart by kind"] = None
    return list(found)


def incident_regexes(path: Path) -> list[str]:
    """`line: pattern` of each string literal holding `INC-` passed to a `re` function (a
    search for incident ids in text)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re":
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                        and INCIDENT_PATTERN.search(arg.value):
                    found.append(f"{node.lineno}: {arg.value}")
    return found


def test_guided_forms_are_not_told_apart_by_an_if_chain_over_their_kinds():
    found = {p.relative_to(ROOT).as_posix(): form_kind_dispatch(p)
             for p in modules().values()}
    assert {p: f for p, f in found.items() if f} == {}


def test_the_form_kind_check_finds_an_if_chain(tmp_path: Path):
    mod = tmp_path / "forms.py"
    mod.write_text(
        "async def go(ctx, fx, state):\n"
        "    if state.get('kind') == 'methane':\n"
        "        return 1\n"
        "    if state['kind'] == KIND:\n"
        "        return 2\n"
        "    if state.get('kind') != 'arrest':  # a form refusing a state not its own\n"
        "        return 3\n"
        "    if rec['kind'] == 'said':  # not a form's state\n"
        "        return 4\n"
        "    return e.kind == 'incident.reported'  # an event's kind: a typed attribute\n")
    assert form_kind_dispatch(mod) == ["2: state.get('kind') == 'methane'",
                                       "1: go tells forms apart by kind"]


def test_no_module_searches_text_for_an_incident_id():
    found = {p.relative_to(ROOT).as_posix(): incident_regexes(p) for p in modules().values()}
    assert {p: f for p, f in found.items() if f} == {}


def test_the_incident_regex_check_finds_one(tmp_path: Path):
    mod = tmp_path / "inbound.py"
    mod.write_text("import re\nID = re.compile(r'\\bINC-\\d+\\b')\n"
                   "OTHER = re.compile(r'/control/login/[A-Za-z0-9_-]+')\n")
    assert incident_regexes(mod) == ["2: \\bINC-\\d+\\b"]


def string_decisions(path: Path) -> list[str]:
    """`line: code` of each decision on a string or a probe where a typed value or a
    constructor argument belongs: `reply_via` split or partitioned, a clock's attributes
    probed with getattr, a core's `handle` replaced from outside (monkey-patched)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("partition", "split", "rpartition", "rsplit") \
                and "reply_via" in ast.unparse(node.func.value):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "hasattr") and node.args \
                and "clock" in ast.unparse(node.args[0]):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "handle" \
                        and ast.unparse(target.value) != "self":
                    found.append(f"{node.lineno}: {ast.unparse(target)} = …")
    return sorted(found, key=lambda f: int(f.partition(":")[0]))


def test_no_decision_on_a_packed_string_or_a_probe():
    found = {p.relative_to(ROOT).as_posix(): string_decisions(p) for p in modules().values()}
    assert {p: f for p, f in found.items() if f} == {}


def test_the_string_decision_check_finds_a_split_a_probe_and_a_patch(tmp_path: Path):
    mod = tmp_path / "core.py"
    mod.write_text("how, _, mid = cmd.reply_via.partition(':')\n"
                   "set_clock = getattr(self.clock, 'set', None)\n"
                   "core.handle = counted\n"
                   "self.handle = handle\n"
                   "word, _, rest = text.partition(' ')\n")
    assert string_decisions(mod) == ["1: cmd.reply_via.partition(':')",
                                     "2: getattr(self.clock, 'set', None)",
                                     "3: core.handle = …"]
