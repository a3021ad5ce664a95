"""The stewarding tile and the map's post overlay on the live screen: planned vs filled posts
per zone of the map (outlined amber/red, with a "3/5 posts" label) and who has, and has not
yet, acknowledged the latest broadcast and every procedure in force (until its all-clear),
against the plan, naming the planned stewards the bot cannot reach. Pushed to the screens
over the change stream whenever a stewarding event is logged."""

from __future__ import annotations

from typing import Any

from bot.core.dispatch import Core
from bot.domain.deployment import plan_state, posts_of, tonight
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.procedures import Broadcast, Steward, target_label
from bot.domain.rota_reach import live_procedures
from bot.store.stewarding_keys import Stewarding

# Log events that change what the tile or the overlay shows.
STEWARDING_KINDS = frozenset({"stewards.broadcast", "stewards.procedure",
                              "stewards.acknowledged", "deploy.filled", "deploy.attendance",
                              "steward.onpost"})
NAMES = 40  # names listed under "not yet" (the count says how many more)


async def stewarding_view(core: Core, state: Stewarding, fx: Fixture,
                          map_zones: set[str]) -> dict[str, Any]:
    """What the screen shows of the stewarding plan and the latest acknowledgements."""
    ground = core.grounds.get(fx.ground) or next(iter(core.grounds.values()))
    filled, attendance = await state.deployment(fx.id)
    posts = posts_of(core.settings.config_dir, fx.ground or ground.id, fx.id)
    out: dict[str, Any] = {"zones": {}, "posts": None, "ack": None, "procedures": []}
    if posts:
        plan = plan_state(posts, filled, attendance or fx.attendance, map_zones)
        out["zones"] = {z.zone: {"label": z.label, "level": z.level,
                                 "mobile": (f"{z.mobile_filled}/{z.mobile_planned} mobile"
                                            if z.mobile_planned else ""),
                                 "unfilled": list(z.unfilled)} for z in plan.zones}
        out["posts"] = {"planned": len(posts), "filled": sum(z.filled for z in plan.zones),
                        "attendance": plan.attendance, "mobile_needed": plan.mobile_needed,
                        "mobile_planned": plan.mobile_planned,
                        "mobile_filled": plan.mobile_filled, "mobile_short": plan.mobile_short}
    sent = [b for b in await state.broadcasts(fx.id) if b.kind != "rollcall"]
    live = live_procedures(sent)
    newest = sent[-1] if sent else None
    if newest is not None or live:
        roster = [Steward(m.who, m.name or m.user, m.role, m.zone)
                  for m in core.roster.values()]
        names = {s.who: s.name for s in (tonight(roster, filled, await state.tabards(), posts)
                                         if filled else roster)}
        out["ack"] = _tile(newest, ground, names) if newest is not None else None
        out["procedures"] = [_tile(b, ground, names) for b in live if b is not newest]
    return out


def _tile(bc: Broadcast, ground: Ground, names: dict[str, str]) -> dict[str, Any]:
    """One message's tile: who has it of the planned, who not yet, who the bot cannot
    reach (tabard, rota name, post: radio them)."""
    return {"id": bc.id, "word": bc.word, "procedure": bc.procedure, "at": bc.at,
            "target": target_label(bc.target, ground), "sent": bc.of,
            "have": len(bc.acked), "not_yet": [names.get(w, w) for w in bc.missing[:NAMES]],
            "more": max(0, len(bc.missing) - NAMES),
            "unreached": [u.show() for u in bc.unreached[:NAMES]],
            "unreached_more": max(0, len(bc.unreached) - NAMES)}
