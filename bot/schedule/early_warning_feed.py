"""Early warning at run time: each fixture's new reports (at their own place, merged or not)
and turnstile readings fed to its Watch; a warning, with its evidence and a suggested
action, goes to control and command once (whichever replica logs it first) and is logged;
so is its end (cleared by the fixture's clock, or dismissed by control)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Any

from bot.core.dispatch import Core
from bot.domain.clock import iso, parse_iso
from bot.domain.crowd_signals import IngressReading
from bot.domain.early_warning import (
    Cleared,
    Report,
    Rules,
    Warning,
    Watch,
    load_rules,
    pressure_words_in,
)
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.ledger import Event
from bot.domain.messages import Button, Outbound, Reply
from bot.domain.vocab import INCIDENT_TYPES
from bot.store import Store
from bot.store.feed import Feed

log = logging.getLogger(__name__)
AUDIENCES = ("control", "command")
SYSTEM = "system:early-warning"
SHIPPED = Path(__file__).resolve().parents[2] / "config" / "early_warning.toml"


def report_of(ev: Event, words: tuple[str, ...] = ()) -> Report | None:
    """The report an event is (a new incident, or a report that joined one, at its own
    place), else None; `words`: the crowd-pressure words to find in the reporter's own text
    (its description as typed, never a rendered message)."""
    if ev.kind == "incident.reported":
        d, ref = ev.data, str(ev.data.get("id") or "")
    elif ev.kind == "incident.merged" and isinstance(ev.data.get("report"), dict):
        d, ref = ev.data["report"], str(ev.data.get("id") or "")
    else:
        return None
    try:
        people = str(d.get("people") or "0")
        return Report(parse_iso(str(d.get("at") or d.get("reported_at") or ev.at)),
                      str(d["location"]), int(d["severity"]), str(d.get("type", "")),
                      str(d.get("affiliation") or "unknown"),
                      pressure_words_in(str(d.get("description") or ""), words),
                      int(people) if people.isdigit() else 0, ref, ev.id or "")
    except (KeyError, ValueError, TypeError):
        return None


@dataclass
class EarlyWarning:
    """Follows the active fixtures' logs from where it started (never the past), and the
    turnstile readings handed to it; warns, and logs when a warning clears or is dismissed."""

    core: Core
    store: Store  # the incident log, where a warning is logged once
    rules: Rules
    feed: Feed
    watches: dict[str, Watch] = field(default_factory=dict)
    last: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, core: Core, store: Store, feed: Feed) -> EarlyWarning:
        """From config/early_warning.toml (the shipped rules when a config folder has none);
        `store` and `feed` handed over by the composition root."""
        path = Path(core.settings.config_dir) / "early_warning.toml"
        if not path.exists():
            path = SHIPPED
        return cls(core, store, load_rules(path), feed)

    async def _watch(self, fx: Fixture) -> Watch:
        if fx.id not in self.last:
            self.last[fx.id] = await self.feed.last_id(fx.id)
            ground = self.core.grounds.get(fx.ground) or next(iter(self.core.grounds.values()))
            self.watches[fx.id] = Watch(self.rules, ground, fx.kickoff)
        return self.watches[fx.id]

    async def sweep(self) -> list[Warning]:
        """Read each active fixture's new events; warn about every zone heating up, and log
        the warnings that cleared by the fixture's clock (virtual in a drill)."""
        fx = await self.core.active_fixture()
        if fx is None:
            return []
        watch = await self._watch(fx)
        out: list[Warning] = []
        while True:
            events = await self.feed.after(fx.id, self.last[fx.id], 500)
            if not events:
                break
            self.last[fx.id] = events[-1].id
            for ev in events:
                if ev.kind == "fixture.early_warning_cleared":
                    watch.dismiss(str(ev.data.get("zone", "")), parse_iso(ev.at))
                    continue
                report = report_of(ev, self.rules.pressure_words)
                if report is None:
                    continue
                for w in watch.feed(report):
                    if await self.warn(fx.id, w):
                        out.append(w)
        for c in watch.tick(self.core.clock.now()):
            await self.cleared(fx.id, c)
        return out

    async def ingress(self, readings: list[IngressReading]) -> list[Warning]:
        """Turnstile readings for the active fixture (the ingress feed hands them over);
        the warnings they raise, sent and logged."""
        fx = await self.core.active_fixture()
        if fx is None:
            return []
        watch = await self._watch(fx)
        out = []
        for reading in sorted(readings, key=lambda r: r.at):
            for w in watch.ingress(reading):
                if await self.warn(fx.id, w):
                    out.append(w)
        return out

    async def warn(self, fx_id: str, w: Warning) -> bool:
        """Log the warning and send it to control and command, once across replicas."""
        at = w.at or w.reports[-1].at
        ground = self.watches[fx_id].ground if fx_id in self.watches else None
        ev = Event(kind="fixture.early_warning", at=iso(at), by=SYSTEM, role="system",
                   data={"zone": w.zone, "zones": list(w.zones), "rule": w.rule,
                         "score": w.score, "reports": len(w.reports), "text": w.text,
                         "action": w.action, "evidence": evidence_of(w)})
        lines = [w.text]
        lines += [evidence_line(e, ground, self.core.settings.zone) for e in evidence_of(w)]
        lines.append(f"Suggested: {w.action}")
        where = w.zone
        reply = Reply("\n".join(lines), title="Early warning",
                      buttons=[[Button("Dismiss", f"/warnings dismiss {where}", "danger")]])
        outs = [Outbound(a, reply, fixture=fx_id) for a in AUDIENCES]
        once = f"early-warning:{fx_id}:{w.zone}:{int(at.timestamp())}"
        # the messages go into the outbox in the same write as the logged warning
        if not await self.store.log_once(fx_id, ev, self.core.notifier.outbox.ops(outs), once):
            return False
        await self.core.notifier.send(outs)
        return True

    async def cleared(self, fx_id: str, c: Cleared) -> bool:
        """Log that a warning's area calmed down (once across replicas); the wall stops
        showing it and control is told."""
        ev = Event(kind="fixture.early_warning_cleared", at=iso(c.at), by=SYSTEM,
                   role="system", data={"zone": c.zone, "zones": list(c.zones), "why": c.why})
        ground = self.watches[fx_id].ground
        reply = Reply(f"Early warning cleared — {ground.short_label(c.zone, 30)}: reports and "
                      "turnstiles back to normal.", title="Early warning cleared")
        outs = [Outbound("control", reply, fixture=fx_id)]
        once = f"early-warning-cleared:{fx_id}:{c.zone}:{int(c.at.timestamp())}"
        if not await self.store.log_once(fx_id, ev, self.core.notifier.outbox.ops(outs), once):
            return False
        await self.core.notifier.send(outs)
        return True


def evidence_of(w: Warning) -> list[dict[str, Any]]:
    """The reports and turnstile readings behind a warning, with their times (data, not
    prose: rendered by evidence_line)."""
    out: list[dict[str, Any]] = [
        {"kind": "report", "at": iso(r.at), "ref": r.ref, "zone": r.zone,
         "severity": r.severity, "type": r.type, "people": r.people, "words": list(r.words)}
        for r in w.reports]
    out += [{"kind": "ingress", "at": iso(x.at), "zone": x.zone, "inside": x.inside,
             "capacity": x.capacity, "rate": x.rate_per_min, "planned": x.planned_rate_per_min,
             "stalled": x.stalled} for x in w.ingress]
    return out


def evidence_line(e: dict[str, Any], ground: Ground | None, tz: tzinfo) -> str:
    """'21:05 INC-5 S4 throwing missiles, NE segregation, 40 people, "pressure"'."""
    t = f"{parse_iso(e['at']).astimezone(tz):%H:%M}"
    where = ground.short_label(e["zone"], 30) if ground else e["zone"]
    if e["kind"] == "ingress":
        state = "stalled" if e["stalled"] else f"{e['rate']:.0f}/min (plan {e['planned']:.0f})"
        full = f", {e['inside']:,}/{e['capacity']:,} in" if e["capacity"] else ""
        return f"• {t} turnstiles {where}: {state}{full}"
    bits = [f"{e['ref']} " if e.get("ref") else "", f"S{e['severity']} ",
            INCIDENT_TYPES.label(e["type"]).lower(), f", {where}"]
    if e.get("people"):
        bits.append(f", {e['people']} people")
    if e.get("words"):
        bits.append(", " + " ".join(f"“{w}”" for w in e["words"]))
    return "• " + t + " " + "".join(bits)
