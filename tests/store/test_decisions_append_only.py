"""No code path deletes or rewrites a decision (issue 25): the decision log's keys are named
only in bot/store/decision_keys.py, which only appends; and a night of commands leaves every
earlier entry exactly as it was written."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from bot.store import decision_keys as decisions_module
from bot.store import ops

ROOT = Path(__file__).resolve().parents[2]
APPEND_ONLY_OPS = {"Xadd", "Incr", "Set", "RequireExists", "log_event", "phase_op",
                   # a correction's one-per-entry marker is read and guarded, never rewritten
                   "Get", "RequireMissing",
                   # a review time is a deadline in the sweep's set, not part of the log
                   "Zadd", "Zrem"}
KEY_NAMES = re.compile(r"""["'](decisions|decseq|dec:)""")


def test_only_the_decision_module_names_the_decision_keys() -> None:
    own = Path(decisions_module.__file__).resolve()
    offenders = [str(p.relative_to(ROOT)) for base in ("bot", "handlers")
                 for p in sorted((ROOT / base).rglob("*")) if p.suffix in (".py", ".lua")
                 and p.resolve() != own and "store" in p.parts and KEY_NAMES.search(p.read_text())]
    assert offenders == []


def test_the_decision_module_writes_only_by_appending() -> None:
    tree = ast.parse(Path(decisions_module.__file__).read_text())
    called = {n.func.id for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    writes = (called & (set(vars(ops)) | {"phase_op"})) - {"Event", "Var"}  # store ops
    assert writes <= APPEND_ONLY_OPS, writes - APPEND_ONLY_OPS
    # the one Set writes the new entry's marker, under the number INCR just took
    src = Path(decisions_module.__file__).read_text()
    assert 'Set("dec:" + N, "1")' in src and src.index("Incr(SEQ") < src.index('Set("dec:"')
    # redis-py calls are made on the client the gateway hands in: `lambda r: r.<command>`
    redis_calls = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                   and isinstance(n.value, ast.Name) and n.value.id == "r"}
    assert redis_calls == {"xrange"}


async def test_a_night_of_commands_leaves_every_earlier_entry_as_written(say, core) -> None:
    fx = await core.active_fixture()
    key = f"md:{{{fx.id}}}:decisions"
    steps = [
        ("/incident disorder @stb walkway missiles", "steward"),
        ("/decision d=Hold the away fans why=Clashes on the walkway inc=INC-1", "safety_officer"),
        ("/decision d=Release the away fans at 22:10 why=Walkway clear supersedes=D-1",
         "safety_officer"),
        ("/methane m=yes e=stb walkway t=crush h=surge a=gate A n=3 s=LAS", "safety_officer"),
        ("/decision d=Close gate C why=crush at the turnstiles type=gate", "control"),
        ("/decision d=Close gate C why=crush at the turnstiles type=gate", "control"),  # again
        ("/handover INC-1 TSG deploying", "police_commander"),
        ("/inspect walkway_netting fail", "supervisor"),
        ("/inspect override walkway closed off", "safety_officer"),
        ("/lockdown all suspicious item at gate A", "safety_officer"),
        ("/decision why D-3", "safety_officer"),
        ("Three casualties on the stairs", "safety_officer"),
        ("none", "safety_officer"),
        ("/amend INC-1 severity=4", "control"),
        ("/resolve INC-1 dispersed", "control"),
        ("/phase full_time", "safety_officer"),
        ("/decision d=x why=y supersedes=D-99", "control"),
    ]
    before: list = []
    for text, role in steps:
        r = await say(text, as_=role, dedupe="gate C" if "gate C" in text else None)
        if text.startswith("/lockdown"):  # confirmed: the procedure and its decision
            await say(r.reply.buttons[0][0].command, as_=role)
        now = await core.store.gateway.r.xrange(key)
        assert now[:len(before)] == before, text
        before = now
    form = await core.facades.forms.form(fx.id, "console:safety_officer")
    await say(form and f"/decision step {form['fid']} record" or "/decisions", as_="safety_officer")
    after = await core.store.gateway.r.xrange(key)
    assert after[:len(before)] == before and len(after) == 8
