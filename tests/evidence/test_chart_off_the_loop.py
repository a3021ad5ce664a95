"""Drawing the summary chart (matplotlib, up to a second) does not stall other commands:
it runs in a worker thread while the event loop keeps answering."""

from __future__ import annotations

import asyncio
import threading

from bot.evidence import match_chart


async def test_status_is_answered_while_the_summary_chart_is_drawn(say, monkeypatch):
    started, release = threading.Event(), threading.Event()
    order: list[str] = []
    draw = match_chart.render_chart

    def slow_chart(*args: object) -> bytes:
        started.set()
        release.wait(10)  # a safety net only: the test sets it (on the old code, it lapses)
        order.append("chart drawn")
        return draw(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(match_chart, "render_chart", slow_chart)
    assert (await say("/incident pyro @stb_upper s3", as_="steward")).reply.ok
    summary = asyncio.create_task(say("/summary", as_="control"))
    await asyncio.to_thread(started.wait, 10)  # the chart is being drawn now

    status = await say("/status", as_="control")
    order.append("status answered")
    assert status.reply.ok and not summary.done()
    release.set()
    result = await summary
    assert order == ["status answered", "chart drawn"]
    assert result.reply.ok and result.reply.images[0][:4] == b"\x89PNG"
