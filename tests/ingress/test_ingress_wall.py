"""The ingress tile on the control room's live screen (issue 35): people in and each stand's
% full for control, never for a steward's screen; an alert is a line of the screen's log."""

from __future__ import annotations

from bot.web.visibility import Viewer, event_view, tiles_for
from tests.support.ingress import pour
from tests.support.web import room  # noqa: F401  (the fixture)


async def test_the_wall_shows_the_ingress_tile_and_the_alert(core, clock, room):  # noqa: F811
    await pour(core, clock, "gate_away", 180, 14.5)  # 87% of the away section
    fx = await core.active_fixture()
    all_tiles = await room.live.tiles(fx)
    control = tiles_for(all_tiles, Viewer("console:control", "control", "Control", core.roles))
    ing = control["ingress"]
    assert (ing["inside"], ing["capacity"]) == (2610, 62_500)
    away = next(s for s in ing["stands"] if s["zone"] == "away_upper")
    assert (away["label"], away["pct"]) == ("Away upper (NE)", 87)
    assert abs(away["rate"] - 180) <= 9  # a minute's rate over the last five minutes' bins
    steward = tiles_for(all_tiles, Viewer("console:steward", "steward", "Steward", core.roles), [])
    assert "ingress" not in steward
    [alert] = [e for e in await core.store.events(fx.id) if e.kind == "ingress.alert"]
    viewer = Viewer("console:control", "control", "Control", core.roles)
    line = event_view(alert, None, viewer, room.ground_map(fx).ground)
    assert line["location"] == "away_upper"
    assert line["what"].startswith("Away section, upper tier (north-east corner) is 85% full "
                                   "(2,550 of 3,000), past the 85% alarm")
