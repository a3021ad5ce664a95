"""The change feed for screens: one blocking reader per fixture, fanned out to every screen.

However many screens are open, each new event costs one blocking read, one read of the
incidents it touched and one of the counters, shared by all screens watching that fixture.
A batch is rendered once per kind of viewer and compressed once: every screen of that kind
gets the same bytes (no per-screen serialising, no per-screen Redis reads).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import zlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from bot.core.dispatch import Core
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.ledger import Event
from bot.evidence.match_chart import ChartData, chart_from_counts
from bot.observe.repeats import RepeatedFailure
from bot.store import Store, StoreUnavailable
from bot.store.facades import WebState
from bot.store.log_views import LogViews
from bot.store.stewarding_keys import Stewarding
from bot.tasks import cancel_and_wait
from bot.web.access import Session
from bot.web.delivery_tile import control_chats, delivery_rows, incident_delivery
from bot.web.ingress_tile import ingress_view
from bot.web.stewarding_tile import STEWARDING_KINDS, stewarding_view
from bot.web.timeline_svg import render_svg_chart
from bot.web.visibility import Viewer, event_view, incident_view, sees_incident, tiles, tiles_for

log = logging.getLogger(__name__)

BLOCK_MS = 5000
# Screens get changes at most this often: under a flood of reports one read, one tiles
# computation and one write per screen cover many events, so screens never slow reports.
COALESCE_S = 0.15
CHART_KINDS = ("incident.reported", "arrest.recorded")  # what moves the timeline
LIVE_BINS = 24  # a live screen's chart: the last 2 hours, per 5 minutes
CHART_S = 1.5  # the chart is redrawn for the screens at most this often
DELIVERY_S = 1.0  # how often the delivery-health tile is checked (pushed only on a change)
WATCH_S = 300.0  # how long an incident's card delivery is followed for the screens
LOG_LINES = 200  # log lines a screen opens with
SNAPSHOT_EVENTS = LOG_LINES * 3  # the newest events a snapshot keeps (some may be hidden)
SNAPSHOT_INCIDENTS = 5000  # the newest incidents a first paint considers
FEED_IDLE_S = 600.0  # a fixture's feed no screen has used for this long stops (reopened on use)
MAX_BACKLOG = 200  # batches a slow screen may fall behind before it is dropped (it resumes)
# A screen's stream is one endless gzip member: this header, then self-contained pieces.
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def gzip_piece(data: bytes) -> bytes:
    """Data as a piece of an endless gzip stream that needs nothing before it (an empty
    window, sync-flushed, never final): the same bytes can go to every screen, whatever each
    was sent before. SSE text compresses about tenfold, and bytes are what fan-out costs."""
    c = zlib.compressobj(1, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)


def stream_key(sid: str) -> tuple[int, int]:
    """A stream id as a comparable pair."""
    ms, _, seq = sid.partition("-")
    return int(ms), int(seq or 0)


@dataclass
class Change:
    """One event with what a screen needs to show it: the incident it touched, fresh tiles."""

    event: Event
    incident: dict[str, str] | None
    tiles: dict[str, Any]
    ground: Ground


@dataclass
class Batch:
    """Changes read together; each viewer's rendering is made once and shared."""

    changes: list[Change]
    rendered: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # session id -> still open (with its role), checked for every screen in one read
    verdicts: dict[str, bool] = field(default_factory=dict)
    blobs: dict[tuple[str, bool], bytes] = field(default_factory=dict)
    last_of: dict[str, int] = field(default_factory=dict)  # incident id -> its last change

    def __post_init__(self) -> None:
        for i, c in enumerate(self.changes):
            if c.incident is not None:
                self.last_of[c.incident.get("id", "")] = i

    def for_viewer(self, viewer: Viewer, room: LiveRoom) -> list[tuple[str, str]]:
        """(stream id, JSON) of the changes this member may see. An incident's view goes
        with its last change in the batch, the tiles with the last change they may see."""
        if viewer.key not in self.rendered:
            payloads = []
            for i, c in enumerate(self.changes):
                mine = c.incident is not None and self.last_of.get(c.incident.get("id", "")) == i
                payload = room.payload(c, viewer, tiles=False, incident=mine)
                if payload is not None:
                    payloads.append((c, payload))
            if payloads:
                c, last = payloads[-1]
                last.update({k: v for k, v in (room.payload(c, viewer) or {}).items()
                             if k == "tiles"})
            self.rendered[viewer.key] = [(c.event.id, json.dumps(p, separators=(",", ":")))
                                         for c, p in payloads]
        return self.rendered[viewer.key]

    def blob(self, viewer: Viewer, room: LiveRoom, after: tuple[int, int] = (0, 0),
             gz: bool = False) -> bytes:
        """The SSE text of the changes after a stream id, for one member (one write), as a
        gzip piece when the screen takes gzip; made once and shared by every screen alike."""
        rows = self.for_viewer(viewer, room)
        whole = not rows or stream_key(rows[0][0]) > after
        if whole and (viewer.key, gz) in self.blobs:
            return self.blobs[viewer.key, gz]
        out = "".join(f"id: {sid}\nevent: change\ndata: {data}\n\n" for sid, data in rows
                      if stream_key(sid) > after).encode()
        if gz and out:
            out = gzip_piece(out)
        if whole:
            self.blobs[viewer.key, gz] = out
        return out


class Notice:
    """Something every screen but a steward's is told that is not a log event (delivery
    health, the redrawn chart): made, serialised and compressed once per police view or not,
    and only when a screen of that kind is there to take it."""

    def __init__(self, kind: str, make: Callable[[bool], dict[str, Any]]) -> None:
        self.kind, self.make = kind, make
        self.pieces: dict[tuple[bool, bool], bytes] = {}
        self.verdicts: dict[str, bool] = {}  # as Batch.verdicts

    def blob(self, viewer: Viewer, room: LiveRoom, after: tuple[int, int] = (0, 0),
             gz: bool = False) -> bytes:
        """The same bytes for every screen of a kind."""
        if viewer.steward:
            return b""
        police = viewer.police_view
        if (police, gz) not in self.pieces:
            data = json.dumps(self.make(police), separators=(",", ":"))
            plain = f"event: {self.kind}\ndata: {data}\n\n".encode()
            self.pieces[police, False], self.pieces[police, True] = plain, gzip_piece(plain)
        return self.pieces[police, gz]


@dataclass
class Snapshot:
    """What a new screen's first paint needs of a fixture, as of one event of its log: the
    newest events, every incident and the tiles (the stewarding tile too). Built once from
    the store, then kept current from the feed's own batches (no read of its own), so a
    first paint reads nothing of the night but what was logged since; the screen then
    resumes from `last`."""

    last: str  # the newest event it includes
    newest: deque[Event] = field(default_factory=lambda: deque(maxlen=SNAPSHOT_EVENTS))
    incidents: dict[int, dict[str, str]] = field(default_factory=dict)  # n -> whole hash
    tiles: dict[str, Any] = field(default_factory=dict)
    stewarding: dict[str, Any] | None = None
    ready: bool = False
    # how new each incident's hash (and the tiles) is at least: the newest event logged
    # before it was read (a slower read of older data never overwrites newer data)
    as_of: dict[int, tuple[int, int]] = field(default_factory=dict)
    tiles_as_of: tuple[int, int] = (0, 0)
    version: int = 0  # moves on with every change: what a page made of it is good while equal
    views: dict[str, Any] = field(default_factory=dict)  # viewer key -> made of `views_at`
    views_at: int = -1
    # batches read while it was being built: (the feed's id before them, events, changes)
    pending: list[tuple[str, list[Event], list[Change]]] = field(default_factory=list)

    def apply(self, before: str, events: list[Event], changes: list[Change]) -> bool:
        """Bring it up to date with the events logged after `before` (and the incidents and
        tiles read after them); False when events are missing in between (it is then
        dropped and built again when asked for)."""
        if not self.ready:
            self.pending.append((before, events, changes))
            return True
        if not events:
            return True
        if stream_key(before) > stream_key(self.last):
            return False
        self.version += 1
        for e in events:
            if stream_key(e.id) > stream_key(self.last):
                self.newest.appendleft(e)
                self.last = e.id
        as_of = stream_key(events[-1].id)
        for c in changes:
            inc = c.incident
            if inc is not None and str(inc.get("n", "")).isdigit():
                n = int(inc["n"])
                if as_of >= self.as_of.get(n, (0, 0)):
                    self.incidents[n], self.as_of[n] = inc, as_of
        if changes and as_of >= self.tiles_as_of:
            self.tiles, self.tiles_as_of = changes[-1].tiles, as_of
        return True

    def fill(self, newest: list[Event], incidents: list[dict[str, str]],
             tiles: dict[str, Any]) -> bool:
        """Its first contents, read from the store after `last`, then the batches the feed
        read meanwhile."""
        as_of = stream_key(self.last)
        self.newest.extend(e for e in newest if stream_key(e.id) <= as_of)
        for inc in incidents:
            if str(inc.get("n", "")).isdigit():
                self.incidents[int(inc["n"])] = inc
                self.as_of[int(inc["n"])] = as_of
        self.tiles, self.tiles_as_of = tiles, as_of
        self.version += 1
        self.ready = True
        pending, self.pending = self.pending, []
        return all(self.apply(*p) for p in pending)

    def briefs(self, fields: tuple[str, ...]) -> list[dict[str, str]]:
        """Some fields of the newest incidents, in report order (as Feed.incident_fields)."""
        return [{k: inc[k] for k in fields if k in inc} for inc in self.whole()]

    def set_stewarding(self, view: dict[str, Any] | None) -> None:
        """The stewarding tile as now."""
        self.stewarding = view
        self.version += 1

    def made(self, key: str, make: Callable[[], Any]) -> Any:
        """What a page makes of it for one kind of viewer, made once per version (what was
        made of an older one is let go)."""
        if self.views_at != self.version:
            self.views, self.views_at = {}, self.version
        if key not in self.views:
            self.views[key] = make()
        return self.views[key]

    def whole(self) -> list[dict[str, str]]:
        """The newest incidents, whole, in report order (as Feed.incidents)."""
        return list(self.incidents.values())[-SNAPSHOT_INCIDENTS:]

    def by_n(self, ns: list[int]) -> dict[int, dict[str, str]]:
        """Some incidents by number (as Feed.incidents_by_n)."""
        return {n: self.incidents[n] for n in ns if n in self.incidents}


class Recheck:
    """Put in a screen's queue when its member's sessions ended somewhere (sign-out, removal,
    role change, on any replica): the screen checks its own session before anything else."""


RECHECK = Recheck()
SessionCheck = Callable[[list[Session]], Awaitable[dict[str, bool]]]
Item = Batch | Notice | Recheck | None


class FixtureFeed:
    """The one blocking reader of a fixture's log, feeding the queues of its screens."""

    def __init__(self, room: LiveRoom, fx_id: str) -> None:
        self.room, self.fx_id = room, fx_id
        self.queues: dict[asyncio.Queue[Item], Session] = {}  # each screen's session
        self.last = "0-0"
        self.task: asyncio.Task[None] | None = None
        self._started = asyncio.Lock()
        self._chart: asyncio.Task[None] | None = None  # a redraw waiting for its turn
        self._chart_at = 0.0
        self._chart_dirty = False
        # incidents whose cards are on their way to the control chats -> since when (loop
        # time), and the delivery rows the screens were last told
        self.following: dict[str, float] = {}
        self.told: dict[str, list[dict[str, Any]]] = {}
        self._stewarding: asyncio.Task[None] | None = None  # a push of the stewarding tile
        self._stewarding_dirty = False
        self._stewarding_views = 0  # stewarding views pushed (a snapshot keeps the newest)
        self._ingress: asyncio.Task[None] | None = None  # a push of the ingress tile
        self._ingress_dirty = False
        self.snap: Snapshot | None = None  # a new screen's first paint, kept current
        self._building: asyncio.Task[Snapshot] | None = None
        self.used_at = time.monotonic()  # last asked for a first paint or a stream

    async def _start(self) -> None:
        """Start reading the log from its newest event (once)."""
        async with self._started:
            if self.task is None or self.task.done():
                self.snap = None  # a restarted reader may have missed events
                self.last = await self.room.feed.last_id(self.fx_id)
                self.task = asyncio.create_task(self._run())

    async def snapshot(self) -> Snapshot:
        """The fixture's snapshot for a first paint, with every event logged before this
        call: built from the store the first time (one build however many screens ask at
        once), kept current by the feed after; what the feed has not read yet is read here
        (the events since, and the incidents they touched)."""
        self.used_at = time.monotonic()
        snap = self.snap
        if snap is None or not snap.ready:
            if self._building is None or self._building.done():
                self._building = asyncio.create_task(self._build())
            snap = await asyncio.shield(self._building)
        # the stewarding tile is pushed by a task of its own: a page must not show the one
        # from before a /deploy the feed has read (or this call reads) but not yet pushed
        stale = self._stewarding_dirty or (self._stewarding is not None
                                           and not self._stewarding.done())
        while True:
            before = snap.last
            events = await self.room.feed.after(self.fx_id, before, 1000)
            if not events:
                break
            changes = await self.room.changes(self.fx_id, events)
            if not snap.apply(before, events, changes):  # cannot happen: read after `last`
                raise RuntimeError("snapshot out of step")
            stale = stale or any(e.kind in STEWARDING_KINDS for e in events)
        if stale:
            view = await self.room.stewarding(self.fx_id)
            self._stewarding_views += 1
            snap.set_stewarding(view)
        return snap

    async def _build(self) -> Snapshot:
        await self._start()
        # as of the reader's position: every batch read after it is applied to it
        snap = self.snap = Snapshot(self.last)
        pushed = self._stewarding_views
        try:
            fx = await self.room.store.fixture(self.fx_id)
            feed = self.room.feed
            newest, incidents, tiles, stewarding = await asyncio.gather(
                feed.newest(self.fx_id, SNAPSHOT_EVENTS, end=snap.last),
                feed.incidents(self.fx_id, SNAPSHOT_INCIDENTS),
                self.room.tiles(fx) if fx is not None else asyncio.sleep(0, {}),  # no tiles
                self.room.stewarding(self.fx_id))
        except BaseException:
            if self.snap is snap:
                self.snap = None
            raise
        if self._stewarding_views == pushed:  # else the feed has pushed a newer one
            snap.set_stewarding(stewarding)
        if not snap.fill(newest, incidents, tiles) and self.snap is snap:
            self.snap = None
        return snap

    async def subscribe(self, session: Session) -> asyncio.Queue[Item]:
        """A queue that receives every batch logged after the feed's start."""
        self.used_at = time.monotonic()
        await self._start()
        q: asyncio.Queue[Item] = asyncio.Queue()
        self.queues[q] = session
        self.room.watch_delivery()
        return q

    def unsubscribe(self, q: asyncio.Queue[Item]) -> None:
        """Stop feeding a screen."""
        self.queues.pop(q, None)
        self.used_at = time.monotonic()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        read_at = 0.0
        failures = RepeatedFailure(log, f"live feed of {self.fx_id}")
        while True:
            try:
                await asyncio.sleep(max(0.0, read_at + COALESCE_S - loop.time()))
                events = await self.room.feed.wait_after(self.fx_id, self.last, BLOCK_MS)
                read_at = loop.time()
                if not events:
                    failures.ok()
                    continue
                before, self.last = self.last, events[-1].id
                # the screens' sessions checked while the changes are read: no added wait
                try:
                    changes, verdicts = await asyncio.gather(
                        self.room.changes(self.fx_id, events), self.verdicts())
                except BaseException:
                    self.snap = None  # it would miss these events: built again when asked
                    raise
                if self.snap is not None and not self.snap.apply(before, events, changes):
                    self.snap = None
                batch = Batch(changes, verdicts=verdicts)
                for e in events:  # a changed incident's card goes out again: follow it
                    if e.kind.startswith("incident.") and e.data.get("id"):
                        self.following[str(e.data["id"])] = loop.time()
                if any(e.kind in CHART_KINDS for e in events):
                    self._chart_due()
                if any(e.kind in STEWARDING_KINDS for e in events):
                    self._stewarding_due()
            except StoreUnavailable:
                await asyncio.sleep(1)
                continue
            except Exception as exc:
                failures.failed(exc)
                await asyncio.sleep(1)
                continue
            failures.ok()
            self.broadcast(batch)

    def _chart_due(self) -> None:
        """Redraw the chart for the screens, at most once every CHART_S."""
        self._chart_dirty = True
        if self._chart is None or self._chart.done():
            self._chart = asyncio.create_task(self._push_charts())

    async def _push_charts(self) -> None:
        loop = asyncio.get_running_loop()
        while self._chart_dirty:  # a report logged during a redraw gets one more
            await asyncio.sleep(max(0.0, self._chart_at + CHART_S - loop.time()))
            self._chart_dirty = False
            self._chart_at = loop.time()
            try:
                fx = await self.room.store.fixture(self.fx_id)
                # from the bins' counters: the cost is the number of bins, not of events
                data = chart_from_counts(await self.room.views.chart_counts(self.fx_id),
                                         fine=True)
            except StoreUnavailable:
                self._chart_dirty = True  # tried again in CHART_S
                continue
            if fx is not None:
                await self.send(Notice("chart", lambda police, fx=fx, data=data: {
                    "svg": self.room.chart(fx, data, police)}))

    async def verdicts(self) -> dict[str, bool]:
        """Whether each screen's session is still open, in one read for all ({} when it
        cannot be read: each screen then checks for itself, and fails alike)."""
        if not self.queues or self.room.check is None:
            return {}
        try:
            return await self.room.check(list(self.queues.values()))
        except StoreUnavailable:
            return {}

    async def send(self, item: Batch | Notice) -> None:
        """Check every screen's session in one read, then hand them the item: a screen
        whose session is still open sends it without a read of its own (50 screens, one
        read per batch, not 50)."""
        item.verdicts.update(await self.verdicts())
        self.broadcast(item)

    def _stewarding_due(self) -> None:
        """Push the stewarding tile and the map's posts to the screens (one at a time; an
        event logged meanwhile gets one more)."""
        self._stewarding_dirty = True
        if self._stewarding is None or self._stewarding.done():
            self._stewarding = asyncio.create_task(self._push_stewarding())

    async def _push_stewarding(self) -> None:
        while self._stewarding_dirty:
            self._stewarding_dirty = False
            try:
                view = await self.room.stewarding(self.fx_id)
            except StoreUnavailable:
                await asyncio.sleep(1)
                self._stewarding_dirty = True
                continue
            if view is not None:
                self._stewarding_views += 1
                if self.snap is not None:
                    self.snap.set_stewarding(view)
                await self.send(Notice("stewarding", lambda _police, v=view: v))

    def ingress_due(self) -> None:
        """Push the ingress tile to the screens: its figures changed with nothing logged
        (one push at a time; a change meanwhile gets one more)."""
        self._ingress_dirty = True
        if self._ingress is None or self._ingress.done():
            self._ingress = asyncio.create_task(self._push_ingress())

    async def _push_ingress(self) -> None:
        while self._ingress_dirty:
            self._ingress_dirty = False
            try:
                fx = await self.room.store.fixture(self.fx_id)
                view = await ingress_view(self.room.core, fx) if fx is not None else None
            except StoreUnavailable:
                await asyncio.sleep(1)
                self._ingress_dirty = True
                continue
            if view is not None:
                if self.snap is not None:
                    self.snap.tiles["ingress"] = view
                await self.send(Notice("ingress", lambda _police, v=view: v))

    def broadcast(self, item: Batch | Notice) -> None:
        """Hand the same item to every screen's queue."""
        for q in list(self.queues):
            if q.qsize() >= MAX_BACKLOG:
                self.queues.pop(q, None)
                q.put_nowait(None)  # the screen reconnects and resumes from its last id
            else:
                q.put_nowait(item)

    async def stop(self) -> None:
        """Stop reading and end every screen's stream."""
        for q in self.queues:
            q.put_nowait(None)
        self.queues.clear()
        await cancel_and_wait([self._chart, self._stewarding, self._ingress, self._building,
                               self.task])
        self.snap = None


class LiveRoom:
    """Feeds by fixture, and what each change looks like to each member."""

    def __init__(self, core: Core, store: Store, web: WebState,
                 map_zones: Callable[[Fixture], set[str]] | None = None,
                 check: SessionCheck | None = None, idle_s: float = FEED_IDLE_S, *,
                 stewarding: Stewarding, views: LogViews) -> None:
        """`store`: the incident log; `web`: the web view's state (feed, sessions, card
        arrivals); `views`: the log's charts and response times; all handed over by the
        composition root; `idle_s`: how long a feed no screen uses keeps reading."""
        self.core = core
        self.store = store
        self.views = views
        self.web = web
        self.record = stewarding  # the stewarding tile's record
        self.map_zones = map_zones  # the zone ids a fixture's map draws (posts are shown there)
        self.check = check  # which screens' sessions are still open (one read for all)
        self.feed = web.feed
        self.feeds: dict[str, FixtureFeed] = {}
        self.idle_s = idle_s
        self.delivery: list[dict[str, Any]] = []
        self._delivery_key: tuple[Any, ...] | None = None
        self._delivery_task: asyncio.Task[None] | None = None
        self.screens: dict[str, set[asyncio.Queue[Item]]] = {}  # member -> their screens
        self._revocations: asyncio.Task[None] | None = None
        self._revocations_ready = asyncio.Event()
        self.names: dict[str, str] = {}  # platform:user -> name, for the log's "who"

    async def on_change(self, what: str, fixture_id: str) -> None:
        """core.hooks: the turnstiles' figures changed (here or on another replica): the
        screens following that fixture get the ingress tile again."""
        feed = self.feeds.get(fixture_id)
        if what == "ingress" and feed is not None and feed.queues:
            feed.ingress_due()

    async def follow_member(self, who: str, q: asyncio.Queue[Item]) -> None:
        """Tell this screen at once when its member's sessions end (waits, briefly, until
        the revocations are subscribed to)."""
        self.screens.setdefault(who, set()).add(q)
        if self._revocations is None or self._revocations.done():
            self._revocations_ready = asyncio.Event()
            self._revocations = asyncio.create_task(self._watch_revocations())
        try:  # without it the screen still checks its session every second
            await asyncio.wait_for(self._revocations_ready.wait(), 2.0)
        except TimeoutError:
            pass

    def unfollow_member(self, who: str, q: asyncio.Queue[Item]) -> None:
        """The screen closed."""
        mine = self.screens.get(who)
        if mine is not None:
            mine.discard(q)
            if not mine:
                del self.screens[who]

    async def _watch_revocations(self) -> None:
        sessions = self.web.sessions
        while True:
            try:
                async for who in sessions.revocations(self._revocations_ready):
                    for q in list(self.screens.get(who, ())):
                        q.put_nowait(RECHECK)
            except StoreUnavailable:
                pass
            except Exception:
                log.exception("web session revocations failed; resubscribing")
            await asyncio.sleep(1)

    def delivery_now(self) -> list[dict[str, Any]]:
        """The delivery-health rows as they are now."""
        self._delivery_key, self.delivery = delivery_rows(self.core.notifier)
        return self.delivery

    def watch_delivery(self) -> None:
        """Tell every screen when a chat's delivery changes (checked each DELIVERY_S)."""
        if self._delivery_task is None or self._delivery_task.done():
            self._delivery_task = asyncio.create_task(self._watch_delivery())

    async def _watch_delivery(self) -> None:
        while True:
            key = self._delivery_key
            rows = self.delivery_now()
            if key != self._delivery_key:
                notice = Notice("delivery", lambda _police, rows=rows: {"rows": rows})
                for f in list(self.feeds.values()):
                    await f.send(notice)
            for f in list(self.feeds.values()):
                if f.queues:
                    try:
                        await self._incident_delivery(f)
                    except StoreUnavailable:
                        pass
            await self.retire_idle()
            await asyncio.sleep(DELIVERY_S)

    async def retire_idle(self) -> None:
        """Stop the feeds of fixtures no screen has used for `idle_s` (a season of
        fixtures would otherwise keep a blocking reader and a snapshot each)."""
        now = time.monotonic()
        for fx_id, f in list(self.feeds.items()):
            if not f.queues and now - f.used_at >= self.idle_s and self.feeds.get(fx_id) is f:
                del self.feeds[fx_id]
                await f.stop()

    async def incident_delivery(self, fx_id: str,
                                ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Incident id -> where its card is in the control chats (see incident_delivery)."""
        notifier = self.core.notifier
        if not ids or not control_chats(notifier):
            return {}
        seen = await self.web.delivered_at(fx_id, ids)
        waiting = notifier.waiting(fx_id)
        return {i: incident_delivery(notifier, seen.get(i, {}), waiting.get(i, []))
                for i in ids}

    async def _incident_delivery(self, f: FixtureFeed) -> None:
        """Tell a fixture's screens where the cards they follow are, when that changed."""
        now = asyncio.get_running_loop().time()
        for i, since in list(f.following.items()):
            if now - since > WATCH_S:  # also when no control chat ever shows it
                f.following.pop(i, None)
        ids = set(f.following) | set(self.core.notifier.waiting(f.fx_id))
        for i in set(f.told) - ids:  # nothing more to tell of it
            del f.told[i]
        if not ids:
            return
        rows = await self.incident_delivery(f.fx_id, sorted(ids))
        changed = {i: r for i, r in rows.items() if f.told.get(i) != r}
        for i, r in rows.items():
            f.told[i] = r
            if all("at" in x for x in r) or now - f.following.get(i, now) > WATCH_S:
                f.following.pop(i, None)
        if changed:
            await f.send(Notice("seen", lambda _police, c=changed: {"incidents": c}))

    def fixture_feed(self, fx_id: str) -> FixtureFeed:
        """The shared feed of a fixture."""
        if fx_id not in self.feeds:
            self.feeds[fx_id] = FixtureFeed(self, fx_id)
            self.watch_delivery()  # which also retires feeds left idle
        return self.feeds[fx_id]

    async def close(self) -> None:
        """Stop every feed and close the blocking connections."""
        await cancel_and_wait([self._delivery_task, self._revocations])
        for f in self.feeds.values():
            await f.stop()
        await self.feed.close()

    async def stewarding(self, fx_id: str) -> dict[str, Any] | None:
        """The stewarding tile and the map's posts for a fixture (None: no such fixture)."""
        fx = await self.store.fixture(fx_id)
        if fx is None:
            return None
        zones = self.map_zones(fx) if self.map_zones is not None else set()
        return await stewarding_view(self.core, self.record, fx, zones)

    async def tiles(self, fx: Fixture) -> dict[str, Any]:
        """Every tile's figure for a fixture."""
        store = self.store
        counts, rt, unacked = await asyncio.gather(
            store.counts(fx.id), self.views.response_times(fx.id), self.feed.unacked_count(fx.id))
        out = tiles(fx, counts, rt, unacked)
        ingress = await ingress_view(self.core, fx)
        if ingress is not None:  # people in per stand (a ground with turnstile counts)
            out["ingress"] = ingress
        return out

    async def learn_names(self, events: list[Event]) -> None:
        """The names of who logged these events (the log shows names, not platform ids);
        a name that cannot be read now is asked again next time."""
        for key in {e.by.removeprefix("web:") for e in events} - set(self.names):
            if len(self.names) > 5000:
                self.names.clear()
            try:
                m = await self.core.member(key)
            except StoreUnavailable:
                continue
            self.names[key] = m.name if m is not None else ""

    async def changes(self, fx_id: str, events: list[Event]) -> list[Change]:
        """Events with the incidents they touched (read once each) and fresh tiles."""
        fx = await self.store.fixture(fx_id)
        if fx is None:
            return []
        await self.learn_names(events)
        ns = sorted({int(e.data["id"][4:]) for e in events
                     if e.kind.startswith("incident.") and str(e.data.get("id", ""))[4:].isdigit()})
        incs = await self.feed.incidents_by_n(fx_id, ns)
        t = await self.tiles(fx)
        ground = self.core.grounds.get(fx.ground) or next(iter(self.core.grounds.values()))
        out = []
        for e in events:
            n = str(e.data.get("id", ""))[4:]
            inc = incs.get(int(n)) if e.kind.startswith("incident.") and n.isdigit() else None
            out.append(Change(e, inc, t, ground))
        return out

    def chart(self, fx: Fixture, data: ChartData | None, police_view: bool,
              last_bins: int | None = LIVE_BINS) -> str:
        """The timeline as one kind of member sees it (police view: arrests marked); the live
        screens show its last `last_bins` bins, the post-match page all (None)."""
        if data is not None and last_bins is not None and data.bins > last_bins:
            cut = data.bins - last_bins
            data = ChartData(data.start + cut * data.width, last_bins,
                             {k: v[cut:] for k, v in data.incidents.items()}, data.arrests[cut:],
                             data.bin_s)
        if data is not None and not police_view:
            data = replace(data, arrests=[0] * data.bins)
            if not any(any(v) for v in data.incidents.values()):
                data = None
        return render_svg_chart(data, self.core.settings.zone, fx.kickoff)

    def payload(self, c: Change, viewer: Viewer, tiles: bool = True,
                incident: bool = True) -> dict[str, Any] | None:
        """What one change looks like to one member (None: nothing for them); the incident's
        current view and the tiles can be left to a later change of the same batch."""
        ev = event_view(c.event, c.incident, viewer, c.ground, self.names)
        if ev is None:
            return None
        out: dict[str, Any] = {"event": ev}
        if incident and c.incident is not None and sees_incident(viewer, c.incident):
            out["incident"] = incident_view(c.incident, c.ground)
        if tiles and not viewer.steward:
            out["tiles"] = tiles_for(c.tiles, viewer)
        return out
