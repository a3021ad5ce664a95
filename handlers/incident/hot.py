"""Suspicious items: the HOT test as buttons, then the 4 Cs, logged on the incident."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.incident.incident_model import parse_incident_id
from bot.domain.messages import Reply, Result
from handlers.incident.card import FOUR_CS, hot_question, verdict
from handlers.incident.reporting import add_text

HOT_USAGE = "/hot <id> h=yes|no o=yes|no t=yes|no"


async def hot_cmd(ctx: Ctx) -> Result:
    """/hot <id> h=.. o=.. t=..: one HOT answer at a time; logs the result when complete."""
    n = parse_incident_id(ctx.args[0]) if ctx.args else None
    if n is None:
        raise UsageError("Which incident?")
    answers: dict[str, str] = {}
    for word in ctx.args[1:]:
        key, _, value = word.lower().partition("=")
        if key not in {"h", "o", "t"} or value not in {"yes", "no", "y", "n"}:
            raise UsageError(f"'{word}' is not a HOT answer.")
        answers[key] = "yes" if value.startswith("y") else "no"
    nxt = hot_question(str(n), answers)
    if nxt is not None:
        return Result(Reply(nxt[0] + "\n" + FOUR_CS, title="Suspicious item", buttons=nxt[1]))
    suspicious = verdict(answers)
    summary = ("HOT: hidden {h}, obviously suspicious {o}, typical {t} → ".format(**answers)
               + ("TREAT AS SUSPICIOUS: apply the 4 Cs" if suspicious
                  else "likely lost property: keep watch, follow lost-property procedure"))
    fx = await ctx.fixture()
    result = await add_text(ctx, fx, n, summary)
    if suspicious:
        result.reply.text = f"{summary}\n{FOUR_CS}\nControl has been told."
        result.reply.title = f"INC-{n}: treat as suspicious"
        ctx.notify("command", Reply(summary, title=f"Suspicious item INC-{n}"), fixture=fx.id)
    else:
        result.reply.text = f"{summary}. Logged on INC-{n}."
    return result


def register(registry: Registry) -> None:
    """Add the HOT walk-through command."""
    registry.add(Spec("hot", HOT_USAGE, "HOT test for a suspicious item", hot_cmd, hidden=True))
