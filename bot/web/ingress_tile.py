"""The ingress tile on the live screen: people in against capacity, each stand's % full,
its queue pressure and whether it is in by kick-off, and the latest alert."""

from __future__ import annotations

from typing import Any

from bot.core.dispatch import Core
from bot.domain.fixture.fixture_model import Fixture
from bot.ingress.ingress_desk import IngressDesk, ground_of
from bot.ingress.ingress_text import forecast


async def ingress_view(core: Core, fx: Fixture) -> dict[str, Any] | None:
    """The tile's figures (None when the ground has no plan or nothing was counted)."""
    p = await IngressDesk(core).picture(fx)
    if p is None or not p.inside:
        return None
    ground, tz = ground_of(core, fx), core.settings.zone
    return {"inside": p.inside, "capacity": p.capacity,
            "pct": round(100 * p.inside / p.capacity) if p.capacity else 0,
            "stands": [{"zone": s.zone, "label": ground.short_label(s.zone),
                        "pct": round(s.pct), "rate": round(s.rate_per_min),
                        "pressure": s.pressure, "late": s.in_by_kickoff is False,
                        "forecast": forecast(s, tz)} for s in p.stands]}
