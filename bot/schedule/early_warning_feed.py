"""Early warning at run time: each fixture's new reports fed to its Watch; a warning goes to
control and command once (whichever replica logs it first), and is logged."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from bot.core.dispatch import Core
from bot.domain.clock import iso, parse_iso
from bot.domain.early_warning import Report, Rules, Warning, Watch, load_rules
from bot.domain.ledger import Event
from bot.domain.messages import Outbound, Reply
from bot.store import Store
from bot.store.feed import Feed

log = logging.getLogger(__name__)
AUDIENCES = ("control", "command")
SYSTEM = "system:early-warning"
SHIPPED = Path(__file__).resolve().parents[2] / "config" / "early_warning.toml"


def report_of(ev: Event) -> Report | None:
    """The report an event is (a new incident, or a report that joined one), else None."""
    if ev.kind == "incident.reported":
        d = ev.data
    elif ev.kind == "incident.merged" and isinstance(ev.data.get("report"), dict):
        d = ev.data["report"]
    else:
        return None
    try:
        return Report(parse_iso(str(d.get("at") or ev.at)), str(d["location"]),
                      int(d["severity"]), str(d.get("type", "")),
                      str(d.get("affiliation") or "unknown"))
    except (KeyError, ValueError, TypeError):
        return None


@dataclass
class EarlyWarning:
    """Follows the active fixtures' logs from where it started (never the past)."""

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

    async def sweep(self) -> list[Warning]:
        """Read each active fixture's new events; warn about every zone heating up."""
        fx = await self.core.active_fixture()
        if fx is None:
            return []
        if fx.id not in self.last:
            self.last[fx.id] = await self.feed.last_id(fx.id)
            ground = self.core.grounds.get(fx.ground) or next(iter(self.core.grounds.values()))
            self.watches[fx.id] = Watch(self.rules, ground)
        out: list[Warning] = []
        while True:
            events = await self.feed.after(fx.id, self.last[fx.id], 500)
            if not events:
                return out
            self.last[fx.id] = events[-1].id
            for ev in events:
                report = report_of(ev)
                if report is None:
                    continue
                for w in self.watches[fx.id].feed(report):
                    if await self.warn(fx.id, w):
                        out.append(w)

    async def warn(self, fx_id: str, w: Warning) -> bool:
        """Log the warning and send it to control and command, once across replicas."""
        at = w.reports[-1].at
        ev = Event(kind="fixture.early_warning", at=iso(at), by=SYSTEM, role="system",
                   data={"zone": w.zone, "zones": list(w.zones), "rule": w.rule,
                         "reports": len(w.reports), "text": w.text})
        reply = Reply(w.text + "\nCheck the area and the cards on the control-room screen.",
                      title="Early warning")
        outs = [Outbound(a, reply, fixture=fx_id) for a in AUDIENCES]
        once = f"early-warning:{fx_id}:{w.zone}:{w.rule}:{int(at.timestamp())}"
        # the messages go into the outbox in the same write as the logged warning
        if not await self.store.log_once(fx_id, ev, self.core.notifier.outbox.ops(outs), once):
            return False
        await self.core.notifier.send(outs)
        return True
