"""The post-match chart: a valid PNG of phone-readable size, binned by 15 minutes and phase."""

from __future__ import annotations

import struct
from datetime import timedelta

from bot.evidence.match_chart import chart_data, chart_from_counts, save_chart
from handlers.briefings.briefing_content import summary_chart


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


async def test_chart_is_valid_png_of_sensible_size(core, say, clock, tmp_path):
    fx = await core.active_fixture()
    await say("/phase gates", as_="control")
    await say("/incident pyro @stb_upper s3", as_="steward")
    clock.advance(timedelta(minutes=40))
    await say("/phase first_half", as_="control")
    await say("/incident missile @stb_walkway s4", as_="steward")
    await say("/incident alcohol @stb_lower s2", as_="steward")
    await say("/arrest missiles x3 inside away", as_="police_liaison")
    png = await summary_chart(core, core.store, core.facades, fx)
    assert png is not None
    w, h = png_size(png)
    assert 800 <= w <= 1600 and 450 <= h <= 1000 and w > h
    assert 10_000 < len(png) < 500_000
    data = chart_data(await core.store.events(fx.id))
    assert data.incidents == {"gates": [1, 0, 0], "first_half": [0, 0, 2]}
    assert data.arrests == [0, 0, 3]
    # the summary draws from counters the write script keeps: the same bins as the log
    assert chart_from_counts(await core.facades.views.chart_counts(fx.id)) == data
    path = save_chart(png, tmp_path, f"summary-{fx.id}")
    assert path.read_bytes() == png and path.parent == tmp_path / "charts"
    assert save_chart(png, tmp_path, f"summary-{fx.id}") != path  # never overwrites


async def test_no_chart_for_a_quiet_fixture(core):
    assert await summary_chart(core, core.store, core.facades, await core.active_fixture()) is None
