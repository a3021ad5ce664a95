"""Data, not prose: nothing outside the renderers reads rendered text back, the store never
writes English, and a change to the card's words breaks no behaviour."""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.delivery import board as boards
from bot.domain.grounds import load_grounds
from bot.domain.incident.incident_model import Incident
from bot.domain.messages import Outbound, Reply, Result
from bot.observe import metrics
from bot.settings import PROJECT_CONFIG
from bot.store import Store
from handlers.incident import card as display
from tests.support.board import (
    pinning_notifier,
)
from tests.support.fake_time import (
    FakeTime,
)
from tests.support.lifecycle import record
from tests.support.source_tree import (
    ROOT,
    modules,
)

# Probes of rendered text: a severity read from a card's words, an id from a reply's title,
# an outcome from a reply's first words, a field from its label, a store refusal compared.
PROBES = ("Severity (", 'removeprefix("Logged', 'startswith("Logged', 'startswith("Added',
          'startswith("Where', 'removeprefix("Where', 'startswith("Status',
          'removeprefix("Status', 'endswith("(closed)', "str(exc) ==")


def test_nothing_outside_the_renderers_probes_rendered_text():
    found = []
    for path in modules().values():
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if any(p in line for p in PROBES) and "_select(" not in line:
                found.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    assert found == []


def test_the_probe_finder_finds_a_probe(tmp_path: Path):
    assert any(p in 'SEVERITY = re.compile(r"^Severity (\\d)")' for p in PROBES)
    assert any(p in 'iid = reply.title.removeprefix("Logged ")' for p in PROBES)


def _english(node: ast.expr) -> bool:
    """A literal sentence (a string with a space, or an f-string) as a refusal."""
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value


def test_the_store_refuses_with_reasons_never_with_sentences():
    guards = {"RequireExists": 1, "RequireMissing": 1, "RequireIn": 3, "Refused": 0}
    found = []
    for name, path in modules().items():
        if not name.startswith("bot.store"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in guards and len(node.args) > guards[node.func.id]:
                arg = node.args[guards[node.func.id]]
                if _english(arg):
                    found.append(f"{name}:{node.lineno}")
    assert found == []


def test_handlers_never_carry_store_variables_or_stand_in_numbers():
    for path in sorted((ROOT / "handlers").rglob("*.py")):
        text = path.read_text()
        assert "Var(" not in text and "ledger import Var" not in text, path.name
        assert "stand_in" not in text and "randbelow" not in text, path.name


# ---------------------------------------------------------------- a copy change
REWORDED = (("Severity ", "Sev "), ("Where: ", "Place: "), ("Status: ", "State: "))


@pytest.fixture
def new_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The card renderer with other words ("Severity" -> "Sev", "Where:" -> "Place:",
    "Status:" -> "State:", "(closed)" -> "[closed]"), wherever it is used."""
    real = display.card

    def reworded(*args: object, **kw: object) -> Reply:
        r = real(*args, **kw)  # type: ignore[arg-type]
        text = r.text
        for old, new in REWORDED:
            text = re.sub(f"(?m)^{re.escape(old)}", new, text)
        return replace(r, text=text, title=r.title.replace("(closed)", "[closed]"))

    for mod in list(sys.modules.values()):
        if getattr(mod, "card", None) is real:
            monkeypatch.setattr(mod, "card", reworded)


def incident(n: int, severity: int, status: str = "reported") -> Incident:
    at = (datetime(2026, 3, 4, 19, 0, tzinfo=UTC) + timedelta(seconds=n)).isoformat()
    return Incident.from_hash({
        "n": str(n), "id": f"INC-{n}", "type": "missile", "severity": str(severity),
        "location": "stb_walkway", "status": status, "reported_at": at, "occurred_at": at,
        "reporter": "telegram:1", "phase": "second_half", "fixture": "fx"})


def cards(incidents: list[Incident]) -> list[Outbound]:
    ground = next(iter(load_grounds(PROJECT_CONFIG).values()))
    return [Outbound("control", display.card(i, ground, UTC), ref=i.id, fixture="fx")
            for i in incidents]


async def test_with_other_words_on_the_card_the_flashpoint_still_orders_and_routes(
        store: Store, new_copy: None):
    time = FakeTime()
    n, sink = pinning_notifier(store, time)
    for k in range(20):  # the group's minute is spent: anything new must wait
        await n.send([Outbound("control", Reply(f"earlier {k}"))])
    await n.drain()
    burst = [incident(100 + k, 4 if k == 3 else 5 if k == 7 else 2) for k in range(12)]
    sent = cards(burst)
    assert sent[0].reply.text.startswith("Sev ")  # the new words are what is sent
    await n.send(sent)
    await n.drain()
    later = [x for x in sink.sent() if "earlier" not in x]
    # the digest: worst first, each with its place and severity
    digest = next(x for x in later if x.startswith("12 new incidents"))
    lines = digest.splitlines()[1:]
    assert "INC-107" in lines[0] and "INC-103" in lines[1]
    assert "severity 5" in lines[0] and "Sir Trevor Brooking" in lines[0]
    # severity routing: only the actionable ones (4+) get a card of their own
    own = [x.splitlines()[0] for x in later if x.startswith(("🔴", "🟠", "🟢"))]
    assert [x.split()[1] for x in own] == ["INC-107", "INC-103"]
    # the board: every open incident, worst first, with its status
    board = sink.board()
    rows = board.splitlines()[2:]
    assert "INC-107" in rows[0] and "INC-103" in rows[1] and "Reported" in rows[0]
    assert "12 open (s5: 1, s4: 1, s2: 10)" in board
    await n.close()
    # a closed one leaves the board, whatever its title says
    closed = cards([incident(104, 2, "closed")])[0].reply
    assert "[closed]" in closed.title
    row = boards.row_of(closed, 0.0)
    assert row is not None and row.closed and row.severity == 2


# ---------------------------------------------------------------- other words in the answers
FULL_METHANE = ("/methane m=yes e=stb walkway t=crowd crush on the walkway h=surge risk a=gate "
                "A ramp n=12 casualties, 3 serious s=police and LAS on scene")


def reworded(result: Result) -> Result:
    """An answer in other words: "Recorded" for "Logged", "Put with" for "Added to"."""
    r = result.reply
    result.reply = replace(r, title=r.title.replace("Logged", "Recorded"),
                           text=r.text.replace("Added to", "Put with"))
    return result


async def test_with_other_words_in_the_answers_reports_count_and_methane_goes_out(
        say, core, monkeypatch: pytest.MonkeyPatch):
    from handlers.incident import commands as incidents
    from handlers.incident import methane, reporting

    log, add = reporting.log_incident, reporting.add_text

    async def log_reworded(*a: Any, **kw: Any) -> Result:
        return reworded(await log(*a, **kw))

    async def add_reworded(*a: Any, **kw: Any) -> Result:
        return reworded(await add(*a, **kw))

    for module in (incidents, methane):
        monkeypatch.setattr(module, "log_incident", log_reworded)
    monkeypatch.setattr(incidents, "add_text", add_reworded)
    before = metrics.REPORTS.labels("")._value.get()
    r = await say("/incident missile @stb_walkway s2 coins", as_="steward")
    assert r.reply.title == "Recorded INC-1"
    assert metrics.REPORTS.labels("")._value.get() == before + 1  # counted from what it did
    # a steward on scene before the acknowledgement: told it is a note, not an ack
    r = await say("/onscene 1", as_="steward")
    assert r.reply.text.startswith("Noted on INC-1: you are on scene")
    sent = record(core)
    r = await say(FULL_METHANE, as_="safety_officer")
    assert r.reply.title == "METHANE INC-2", r.reply.text
    heads = [o for o in sent if o.reply.title.startswith("🔴 METHANE INC-2")]
    assert sorted(o.audience for o in heads) == ["command", "control", "police"]
