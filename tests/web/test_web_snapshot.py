"""Issue 23 (bench/web.py first paint): a new screen's page comes from the fixture's
snapshot, kept current by the live feed, not from reading every incident per request."""

from __future__ import annotations

import json
from typing import Any

from bot.domain.grounds import Ground
from bot.domain.ledger import Event
from bot.web.live import Change, Snapshot
from bot.web.server import ControlRoom
from tests.conftest import Chat
from tests.support.web_session import (
    sign_in,
    state_of,
)

GROUND = Ground(id="g", name="Ground", zones={})


def _event(sid: str, n: int, kind: str = "incident.status") -> Event:
    return Event(kind=kind, at="2026-12-02T21:00:00+00:00", by="console:control",
                 role="control", data={"id": f"INC-{n}"}, phase="first_half", id=sid)


def _change(ev: Event, n: int, status: str) -> Change:
    inc = {"id": f"INC-{n}", "n": str(n), "status": status, "severity": "3"}
    return Change(ev, inc, {"open": 1, "status": status}, GROUND)


def _ready(last: str) -> Snapshot:
    snap = Snapshot(last)
    reported = {"id": "INC-1", "n": "1", "status": "reported", "severity": "3"}
    assert snap.fill([_event("1-0", 1, "incident.reported")], [reported], {"open": 1})
    return snap


def test_an_older_read_never_overwrites_a_newer_one() -> None:
    snap = _ready("1-0")
    # a page caught up with the ack (2-0) and read the incident after it ...
    ack = _event("2-0", 1)
    assert snap.apply("1-0", [ack], [_change(ack, 1, "acknowledged")])
    # ... before the feed's batch of 1-0, read earlier, came back: it must not win
    assert snap.apply("0-0", [_event("1-0", 1)], [_change(_event("1-0", 1), 1, "reported")])
    assert snap.incidents[1]["status"] == "acknowledged"
    assert snap.tiles["status"] == "acknowledged"
    assert [e.id for e in snap.newest] == ["2-0", "1-0"] and snap.last == "2-0"


def test_missing_events_are_noticed() -> None:
    snap = _ready("1-0")
    later = _event("5-0", 1)
    assert not snap.apply("3-0", [later], [_change(later, 1, "closed")])


def test_batches_read_while_it_is_built_are_applied_after() -> None:
    snap = Snapshot("1-0")
    ack = _event("2-0", 1)
    assert snap.apply("1-0", [ack], [_change(ack, 1, "acknowledged")])  # kept for later
    reported = {"id": "INC-1", "n": "1", "status": "reported", "severity": "3"}
    # the build's reads, as of 1-0 (an event after it, read too, is left to the batch)
    assert snap.fill([ack, _event("1-0", 1, "incident.reported")], [reported], {})
    assert snap.incidents[1]["status"] == "acknowledged"
    assert [e.id for e in snap.newest] == ["2-0", "1-0"]


async def test_a_page_reads_no_incident_from_the_store_once_the_snapshot_is_built(
        client, room: ControlRoom, say: Chat) -> None:
    await say("/incident missile @seg_ne s4 coins thrown", as_="steward")
    await sign_in(client, say, "control")
    first = state_of(await (await client.get("/control/")).text())
    reads: list[Any] = []
    feed = room.live.feed
    real = feed._read

    async def counted(keys: Any, fields: tuple[str, ...] = ()) -> list[Any]:
        keys = list(keys)
        reads.append(keys)
        return await real(keys, fields)

    feed._read = counted  # type: ignore[method-assign]
    again = state_of(await (await client.get("/control/")).text())
    assert reads == [] and again["last"] == first["last"]
    assert set(again["incidents"]) == {"INC-1"}
    # logged after: the page still shows it (read since the snapshot, not the whole night)
    await say("/incident pyro @away_upper s3 flare", as_="supervisor")
    newer = state_of(await (await client.get("/control/")).text())
    assert set(newer["incidents"]) == {"INC-1", "INC-2"}
    assert newer["log"][0]["incident"] == "INC-2"
    assert all(len(keys) == 1 for keys in reads)  # the new incident only


async def test_each_kind_of_member_gets_its_own_page_of_the_same_snapshot(
        client, room: ControlRoom, say: Chat) -> None:
    await say("/incident missile @seg_ne s4 coins thrown", as_="steward")
    await say("/arrest violent_disorder x2 inside away inc=1 ref=MPS/CU/1101",
              as_="police_liaison")
    await sign_in(client, say, "control")
    control = state_of(await (await client.get("/control/")).text())
    await sign_in(client, say, "viewer")
    viewer = state_of(await (await client.get("/control/")).text())
    assert viewer["last"] == control["last"]  # the same snapshot, unchanged in between
    assert any(e["kind"] == "arrest.recorded" for e in control["log"])
    assert not any(e["kind"] == "arrest.recorded" for e in viewer["log"])
    assert "arrests_by_offence" in control["tiles"]
    assert "arrests_by_offence" not in viewer["tiles"]


async def test_a_feed_no_screen_uses_stops_and_a_later_page_still_sees_everything(
        client, room: ControlRoom, say: Chat) -> None:
    """A season of fixtures does not keep a reader each: an idle feed stops; a page
    opened afterwards starts it again and misses nothing logged meanwhile."""
    await say("/incident missile @seg_ne s4 coins thrown", as_="steward")
    await sign_in(client, say, "control")
    first = state_of(await (await client.get("/control/")).text())
    [feed] = room.live.feeds.values()
    reader = feed.task
    await room.live.retire_idle()  # used just now: kept
    assert list(room.live.feeds.values()) == [feed]
    room.live.idle_s = 0.0
    await room.live.retire_idle()
    assert room.live.feeds == {} and reader is not None and reader.done()
    await say("/incident pyro @away_upper s3 flare lit", as_="steward")
    again = state_of(await (await client.get("/control/")).text())
    assert again["last"] != first["last"]
    assert "INC-2" in json.dumps(again)
