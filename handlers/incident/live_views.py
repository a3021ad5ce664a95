"""The incident's messages as shown, rendered at send time: the card control gets, the
reporter's answer and a failed inspection's answer, from the record as it is then
(`LiveViews`, which delivery calls for the references a report stored in the outbox)."""

from __future__ import annotations

import asyncio

from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.incident.incident_card import CARD, RAISED, LiveRef
from bot.domain.incident.incident_model import Incident
from bot.domain.messages import Button, Outbound, Reply, Result
from bot.domain.plurals import counted
from bot.domain.vocab import SEVERITIES
from bot.settings import Settings
from bot.store import Store
from handlers.incident.card import card, hot_prompt, skew_lines


def announce(grounds: dict[str, Ground], settings: Settings, fx: Fixture, inc: Incident) \
        -> tuple[list[Outbound], Result]:
    """The card for control (and command from severity 3) and the reporter's answer."""
    ground = grounds.get(fx.ground) or next(iter(grounds.values()))
    live = card(inc, ground, settings.zone)
    outs = [Outbound(a, live, ref=inc.id, fixture=fx.id) for a in card_audiences(inc.severity)]
    result = Result(Reply(
        f"{inc.what} at {ground.label(inc.location)}, "
        f"severity {SEVERITIES[inc.severity]}.\nControl has it; you'll be told when it's "
        f"acknowledged.\nSend text or a photo in the next "
        f"{window_words(settings.note_window_seconds)} to add to {inc.id}."
        + "".join(f"\n{line}." for line in skew_lines(inc, settings.zone)),
        title=f"Logged {inc.id}",
    ))
    if inc.type == "suspicious_item":  # walk the reporter through HOT and the 4 Cs
        hot_prompt(result.reply, inc.n)
    return outs, result


def card_audiences(severity: int) -> list[str]:
    """Who gets a new incident's card: control, and command from severity 3."""
    return ["control", "command"] if severity >= 3 else ["control"]


class LiveViews:
    """Renders, at send time, the references a report stored in the outbox: from the
    incident's record as it is then (None when it is gone)."""

    def __init__(self, store: Store, grounds: dict[str, Ground], settings: Settings) -> None:
        self.store = store
        self.grounds = grounds
        self.settings = settings

    async def __call__(self, fixture: str, refs: list[LiveRef]) -> dict[LiveRef, Reply]:
        ns = sorted({r.n for r in refs})
        fx, incs = await asyncio.gather(self.store.fixture(fixture),
                                        self.store.incidents(fixture, ns))
        if fx is None:
            return {}
        shown: dict[LiveRef, Reply] = {}
        for n, inc in zip(ns, incs, strict=True):
            if inc is None:
                continue
            outs, result = announce(self.grounds, self.settings, fx, inc)
            for ref in refs:
                if ref.n == n:
                    shown[ref] = outs[0].reply if ref.view == CARD else \
                        raised_reply(inc) if ref.view == RAISED else result.reply
        return shown


def raised_reply(inc: Incident) -> Reply:
    """The answer to a failed inspection item: what failed and the incident it raised."""
    text = (f"✖ FAILED: {inc.marks.get('inspection', 'inspection item')}. "
            f"Raised {inc.id}; control has it.")
    if inc.marks.get("inspection_critical"):
        text += ("\nNOT READY to open turnstiles: a safety-critical item failed. Pass it with "
                 "/inspect, or the Safety Officer opens on override.")
    return Reply(text, title="Pre-event inspection",
                 buttons=[[Button("The checklist", "/inspect")]])


def window_words(secs: int) -> str:
    """The free-text window in words: '5 minutes'."""
    if secs % 60:
        return f"{secs} seconds"
    return counted(secs // 60, "minute")
