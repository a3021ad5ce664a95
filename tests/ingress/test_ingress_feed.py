"""The turnstile feed's door (issue 35): signed batches counted once, bad ones refused with
their reason, over HTTP on the one server, into a real Redis."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.core.dispatch import Core
from bot.ingress.ingress_desk import IngressDesk
from bot.ingress.ingress_replay import replay_counts
from bot.web.ingress_route import PATH, IngressFeed
from tests.support.ingress import KEY, batch_body, signed_headers


@pytest_asyncio.fixture
async def feed(core: Core) -> AsyncIterator[TestClient]:
    """An HTTP client of the ingress route with the test key."""
    app = web.Application()
    IngressFeed(IngressDesk(core, KEY)).add_routes(app)
    c = TestClient(TestServer(app))
    await c.start_server()
    yield c
    await c.close()


async def _inside(say) -> str:
    return (await say("/ingress", as_="control")).reply.text.splitlines()[0]


async def test_a_signed_batch_is_counted_once_and_a_resend_is_refused(feed, core, clock, say):
    body = batch_body("b-1", {"A001": 7, "A002": 5, "E001": 3}, clock.now())
    r = await feed.post(PATH, data=body, headers=signed_headers(body))
    assert r.status == 200
    assert (await r.json())["people"] == 15
    again = await feed.post(PATH, data=body, headers=signed_headers(body))
    assert again.status == 409
    assert "b-1 was counted already" in (await again.json())["reason"]
    fx = await core.active_fixture()
    counts = await core.facades.ingress.read(fx.id, ["gate_a", "gate_e"], clock.now().timestamp())
    assert counts.totals == {"gate_a": 12, "gate_e": 3}  # not 24 and 6
    assert await core.facades.ingress.batches(fx.id) == 1
    assert (await _inside(say)).startswith("In: 15 of 62,500")


async def test_a_forged_or_unsigned_batch_counts_nothing(feed, core, clock):
    body = batch_body("b-2", {"A001": 500}, clock.now())
    forged = await feed.post(PATH, data=body, headers=signed_headers(body, b"guessed-key"))
    assert forged.status == 401
    assert "signature" in (await forged.json())["reason"]
    bare = await feed.post(PATH, data=body)
    assert bare.status == 401
    tampered = body.replace(b"500", b"900")
    r = await feed.post(PATH, data=tampered, headers=signed_headers(body))
    assert r.status == 401
    fx = await core.active_fixture()
    assert await core.facades.ingress.batches(fx.id) == 0


async def test_bad_batches_are_refused_with_the_reason_and_nothing_half_counted(feed, core, clock):
    now = clock.now()
    cases = {
        b"not json": "not JSON",
        json.dumps({"counts": []}).encode(): "batch id",
        batch_body("b-3", {"Z999": 1}, now): "'Z999' is not in the ground file",
        batch_body("b-4", {"A001": 1}, now - timedelta(hours=2)): "more than 300 s from now",
        json.dumps({"batch": "b-5", "counts": [
            {"turnstile": "A001", "count": 3, "at": now.isoformat()},
            {"turnstile": "A002", "count": -4, "at": now.isoformat()}]}).encode():
            "counts[1]: count must be a whole number",
    }
    for body, reason in cases.items():
        r = await feed.post(PATH, data=body, headers=signed_headers(body))
        assert r.status in (400, 422), body
        got = (await r.json())["reason"]
        assert reason in got, (got, reason)
    fx = await core.active_fixture()
    assert await core.facades.ingress.batches(fx.id) == 0  # b-5's good first row not counted


async def test_the_feed_is_refused_until_a_key_is_set(core, clock):
    app = web.Application()
    IngressFeed(IngressDesk(core, None)).add_routes(app)
    async with TestClient(TestServer(app)) as c:
        body = batch_body("b-6", {"A001": 1}, clock.now())
        r = await c.post(PATH, data=body, headers=signed_headers(body))
        assert r.status == 503
        assert "MATCHDAY_INGRESS_KEY" in (await r.json())["reason"]


async def test_a_drill_file_of_counts_is_replayed_once_and_bad_rows_named(core, clock, tmp_path):
    path = tmp_path / "gate_counts.csv"
    path.write_text("at,turnstile,count\n"
                    "2026-11-25T18:05:00+00:00,F001,40\n2026-11-25T18:05:00+00:00,F002,35\n"
                    "2026-11-25T18:06:00+00:00,F001,20\n2026-11-25T18:06:00+00:00,Z9,3\n"
                    "2026-11-25T18:07:00+00:00,F003,12\n")
    fx = await core.active_fixture()
    first = await replay_counts(IngressDesk(core), fx, path, clock)
    assert (first.counted, first.people, first.again) == (2, 87, 0)
    assert first.refused == ["batch gate_counts:2026-11-25T18:06:00_00:00: counts[1]: "
                             "turnstile 'Z9' is not in the ground file"]
    again = await replay_counts(IngressDesk(core), fx, path, clock)
    assert (again.counted, again.again) == (0, 2)
    counts = await core.facades.ingress.read(fx.id, ["gate_f"], clock.now().timestamp())
    assert counts.totals == {"gate_f": 87}
