"""The control-room web view under /control/ on the bot's own aiohttp server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web

from bot.core.dispatch import Core
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.groundmap import GroundMap, load_map, pin_layer, render_map
from bot.domain.incident.incident_model import incident_id, parse_incident_id
from bot.domain.ledger import Event
from bot.domain.messages import Command
from bot.domain.vocab import BAN_TYPES, OFFENCES
from bot.evidence.match_chart import chart_data, chart_from_counts
from bot.evidence.postmatch import build_report
from bot.evidence.summary import mmss
from bot.store import Store, StoreUnavailable
from bot.store.facades import StoreFacades, WebState
from bot.tasks import cancel_and_wait
from bot.web.access import COOKIE, LINK_PATH, Access, Session, clip
from bot.web.decision_panel import decisions_page
from bot.web.live import (
    GZIP_HEADER,
    LIVE_BINS,
    LOG_LINES,
    Batch,
    LiveRoom,
    Notice,
    Recheck,
    Snapshot,
    gzip_piece,
    stream_key,
)
from bot.web.pages import link_page, live_page, message_page, post_match_page, signed_in_page
from bot.web.timeline_svg import render_svg_chart
from bot.web.visibility import (
    ACTIONS,
    CLOSED,
    Viewer,
    alert_reason,
    board_column,
    event_view,
    incident_view,
    sees_incident,
    tiles_for,
)

log = logging.getLogger(__name__)

BOARD_CARDS = 60  # cards a board column may draw (the rest are counted): control.js's CARDS
BRIEF_FIELDS = ("n", "id", "location", "severity", "status", "reporter", "reported_at",
                "escalated_tier")
HEARTBEAT_S = 15.0
ANNOUNCE_TTL_S = 90  # a server that died unannounced stops getting links after this
SESSION_CHECK_S = 1.0  # an idle screen's session is checked this often (expiry)
STATIC = {"control.js": "application/javascript", "control.css": "text/css",
          "postmatch.js": "application/javascript"}
# Only the site's own script, style and connections; no inline script, no framing. The
# referrer stays on the site: with no-referrer browsers send `Origin: null` on its own POSTs.
# base-uri 'self': the pages' links are relative to their own <base> (a club's prefix).
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'self'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY"}
# how to get a link, on every refusal: in chat, or on the bot's own machine (headless)
SIGN_IN_HOW = ("Send /web to the bot in a direct message for a sign-in link (valid a few "
               "minutes, one use). On the bot's own machine, without chat: "
               "matchday web-link --by console:<your id>.")
NOT_FROM_HERE = ("Refused: this was not sent from the control room's own page. Open the "
                 "page (or the sign-in link) in your browser and use its buttons.")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
STREAM_ID = re.compile(r"\d{1,20}-\d{1,20}")
ACTION_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def takes_gzip(accept_encoding: str) -> bool:
    """Does an Accept-Encoding header take gzip (and not with q=0)?"""
    for part in accept_encoding.lower().split(","):
        name, *params = (p.strip() for p in part.split(";"))
        if name in ("gzip", "*"):
            weight = 1.0
            for p in params:
                key, _, value = p.partition("=")
                if key.strip() == "q":
                    try:
                        weight = float(value)
                    except ValueError:
                        weight = 0.0
            return weight > 0
    return False


class ControlRoom:
    """Routes, sessions and live feeds of the control-room screens."""

    def __init__(self, core: Core, store: Store, web: WebState,
                 public_url: str | None = None, *, facades: StoreFacades,
                 prefix: str = "") -> None:
        """`store`: the incident log; `web`: the web view's state; `facades`: the records
        the screens and the report read (stewarding, decisions, timings); each built once by
        the composition root (bot/runtime.py control_room_for) and handed to the screens.
        `prefix`: the path the routes are mounted under ("/c/<club>" on a deployment of many
        clubs): links, redirects and the session cookie stay inside it."""
        self.home = f"{prefix}/control/"
        self.core = core
        self.store = store
        self.facades = facades
        self.access = Access(core, facades)
        self.live = LiveRoom(core, store, web, lambda fx: set(self.ground_map(fx).zones),
                             check=self.access.still_open, stewarding=facades.stewarding,
                             views=facades.views)
        self.public_url = public_url or core.settings.web_base
        self.secure = self.public_url.startswith("https://")
        self.maps: dict[str, GroundMap] = {}
        self.heartbeat_s = HEARTBEAT_S
        self._announcing: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None
        self.session_check_s = SESSION_CHECK_S
        self._static = {name: resources.files("bot.web").joinpath(f"static/{name}").read_bytes()
                        for name in STATIC}

    # ---------------------------------------------------------------- wiring
    def add_routes(self, app: web.Application) -> None:
        """Mount every route under /control/."""
        app.add_routes([
            web.get("/control", self.root), web.get("/control/", self.page),
            web.get(LINK_PATH + "{token}", self.link),
            # every POST changes state: each goes through the one same-origin check first
            web.post(LINK_PATH + "{token}", self._from_here("sign-in", self.redeem)),
            web.post("/control/logout", self._from_here("sign-out", self.logout)),
            web.post("/control/action", self._from_here("action", self.action, json=True)),
            web.get("/control/events", self.events),
            web.get("/control/chart.svg", self.chart), web.get("/control/post-match", self.post),
            web.get("/control/incidents", self.incidents),
            web.get("/control/decisions", self.decisions),
            web.get("/control/static/{name}", self.static),
        ])
        app.on_startup.append(self._on_startup)
        app.on_shutdown.append(self._on_shutdown)
        app.on_response_prepare.append(self._security_headers)

    def web_app(self) -> web.Application:
        """A standalone aiohttp app with only these routes (tests, bench)."""
        app = web.Application()
        self.add_routes(app)
        return app

    async def _on_startup(self, _app: web.Application) -> None:
        # the grounds' maps read now, not on the first screen's page (a cold first paint)
        for ground in self.core.grounds.values():
            self.maps.setdefault(ground.id, load_map(self.core.settings.config_dir, ground))
        # said once before the first request: a /web asked at once gets this server's link
        # (a club's path included), not the settings' address
        with contextlib.suppress(StoreUnavailable):
            await self.access.announce(self.public_url, ANNOUNCE_TTL_S)
        self._announcing = asyncio.create_task(self._announce())
        self._warming = asyncio.create_task(self._warm())

    async def _warm(self) -> None:
        """Build the snapshot of the night a screen opens by default (the one nearest now),
        so that even the server's first page is served from it."""
        try:
            now = self.core.clock.now()
            fx = min(await self.store.fixtures()
                     or await self.store.fixtures(drill=True), default=None,
                     key=lambda f: abs(f.kickoff - now))
            if fx is not None:
                await self.live.fixture_feed(fx.id).snapshot()
        except StoreUnavailable:
            pass  # the first page builds it
        except Exception:
            log.exception("warming the control room's snapshot failed")

    async def _announce(self) -> None:
        """Say where this server is, while it runs: /web and `matchday web-link` build links
        to it (not to their own PORT), and give none when no server runs."""
        while True:
            with contextlib.suppress(StoreUnavailable):
                await self.access.announce(self.public_url, ANNOUNCE_TTL_S)
            await asyncio.sleep(ANNOUNCE_TTL_S / 3)

    async def _on_shutdown(self, _app: web.Application) -> None:
        await cancel_and_wait([self._announcing, self._warming])
        with contextlib.suppress(StoreUnavailable):
            await self.access.sessions.withdraw(self.public_url)
        await self.live.close()

    async def _security_headers(self, request: web.Request, resp: web.StreamResponse) -> None:
        """No server banner on any answer; the control room's pages (refusals included) get
        the security headers, and are never stored by a browser or proxy."""
        resp.headers.popall("Server", None)
        if request.path == self.home[:-1] or request.path.startswith(self.home):
            resp.headers.update(SECURITY_HEADERS)
            resp.headers.setdefault("Cache-Control", "no-store")  # static files: no-cache

    # ---------------------------------------------------------------- sessions
    async def _session(self, request: web.Request, *, json_reply: bool = False) -> Session:
        """The request's live session, or raise a 401 after writing the refusal to the audit."""
        sid = request.cookies.get(COOKIE)
        got = await self.access.session(sid)
        if isinstance(got, Session):
            return got
        await self.access.deny("", f"{request.method} {clip(request.path)}: {got}")
        if json_reply:
            raise web.HTTPUnauthorized(text='{"ok":false,"text":"Not signed in."}',
                                       content_type="application/json")
        raise web.HTTPUnauthorized(
            text=message_page("Not signed in", SIGN_IN_HOW, self.home),
            content_type="text/html")

    def _cookie(self, resp: web.StreamResponse, session: Session | None) -> None:
        if session is None:
            resp.del_cookie(COOKIE, path=self.home[:-1])
            return
        resp.set_cookie(COOKIE, session.sid, path=self.home[:-1], httponly=True, samesite="Strict",
                        secure=self.secure, max_age=self.access.session_ttl)

    async def root(self, request: web.Request) -> web.Response:
        """/control -> /control/."""
        raise web.HTTPFound(self.home)

    async def link(self, request: web.Request) -> web.Response:
        """A sign-in link: whose account it opens and one button (previews in chat only GET)."""
        holder = await self.access.link_holder(request.match_info["token"])
        body = (link_page(request.path, holder.name or holder.who, holder.role, self.home)
                if holder else link_page(request.path, root=self.home))
        return web.Response(text=body, content_type="text/html",
                            headers={"Cache-Control": "no-store"})

    def _same_origin(self, request: web.Request) -> bool:
        """A request from this site's own pages: its Origin is this site's, or (a browser
        that sends no Origin) Sec-Fetch-Site says same-origin. A request vouching for
        neither is refused: nothing shows it came from here."""
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None and site != "same-origin":
            return False
        origin = request.headers.get("Origin")
        if origin is None:
            return site == "same-origin"
        return origin in (self.public_url, f"{request.scheme}://{request.host}")

    def _from_here(self, what: str, handler: Handler, *, json: bool = False) -> Handler:
        """`handler` behind the same-origin check (the one check every POST passes)."""
        async def checked(request: web.Request) -> web.StreamResponse:
            if self._same_origin(request):
                return await handler(request)
            origin = request.headers.get("Origin") or "no Origin, Sec-Fetch-Site " + \
                request.headers.get("Sec-Fetch-Site", "absent")
            await self.access.deny("", f"{what} posted from {clip(origin)}")
            if json:
                return web.json_response({"ok": False, "text": NOT_FROM_HERE}, status=403)
            return web.Response(status=403, content_type="text/html",
                                text=message_page("Refused", NOT_FROM_HERE, self.home))
        return checked

    async def redeem(self, request: web.Request) -> web.Response:
        """Press of the sign-in button: the link is used up and the session cookie set."""
        got = await self.access.redeem(request.match_info["token"])
        if not isinstance(got, Session):
            await self.access.deny("", f"sign-in refused: {got}")
            return web.Response(status=403, content_type="text/html", text=message_page(
                "Link not valid", "This link is unknown, used or expired. " + SIGN_IN_HOW,
                self.home))
        resp = web.Response(text=signed_in_page(self.home), content_type="text/html",
                            headers={"Cache-Control": "no-store"})
        self._cookie(resp, got)
        return resp

    async def logout(self, request: web.Request) -> web.Response:
        """Sign out (needs the CSRF token)."""
        session = await self._session(request)
        form = await request.post()
        if not self.access.csrf_ok(session, str(form.get("csrf", ""))):
            await self.access.deny(session.viewer.who, "sign-out without CSRF token")
            raise web.HTTPForbidden(text="Missing or wrong form token.")
        await self.access.sign_out(session)
        resp = web.Response(text=message_page("Signed out", "You are signed out.", self.home),
                            content_type="text/html")
        self._cookie(resp, None)
        return resp

    # ---------------------------------------------------------------- reads
    async def _fixture(self, request: web.Request, viewer: Viewer) -> Fixture:
        # the screen follows its member's own fixture (/fixture use), as their chat does
        fx_id = request.query.get("fixture", "")
        fx = await (self.store.fixture(fx_id) if fx_id else self.core.fixture_of(viewer.who))
        if fx is None and not fx_id:  # none active (e.g. after a replay): the nearest night
            now = self.core.clock.now()  # a live one; else a drill's (its pages say DRILL)
            fx = min(await self.store.fixtures()
                     or await self.store.fixtures(drill=True), default=None,
                     key=lambda f: abs(f.kickoff - now))
        if fx is None and fx_id:  # a mistyped or old link: say so, never show another night
            raise web.HTTPNotFound(text=message_page(
                "No such fixture", f"There is no fixture {clip(fx_id)!r}. Open {self.home} "
                "for your own fixture (/fixture use in chat chooses it).", self.home),
                content_type="text/html")
        if fx is None:
            raise web.HTTPNotFound(text=message_page(
                "No fixture", "No fixture yet: an admin adds one with /fixture add.", self.home),
                content_type="text/html")
        return fx

    def ground_map(self, fx: Fixture) -> GroundMap:
        """The map of a fixture's ground (loaded once)."""
        ground = self.core.grounds.get(fx.ground) or next(iter(self.core.grounds.values()))
        if ground.id not in self.maps:
            self.maps[ground.id] = load_map(self.core.settings.config_dir, ground)
        return self.maps[ground.id]

    async def _incidents(self, fx: Fixture, viewer: Viewer,
                         snap: Snapshot | None = None) -> list[dict[str, Any]]:
        gm = self.ground_map(fx)
        rows = snap.whole() if snap is not None else await self.live.feed.incidents(fx.id)
        return [incident_view(i, gm.ground) for i in rows if sees_incident(viewer, i)]

    async def _with_delivery(self, fx: Fixture, viewer: Viewer,
                             views: dict[str, dict[str, Any]]) -> None:
        """Each open incident's card delivery to the control chats (not for stewards)."""
        if viewer.steward:
            return
        rows = await self.live.incident_delivery(
            fx.id, [i for i, v in views.items() if not v.get("closed")])
        for i, r in rows.items():
            views[i]["delivery"] = r

    async def _chart_svg(self, fx: Fixture, viewer: Viewer, whole: bool = False) -> str:
        """The timeline for a member: the live screens' last hours, or the whole night."""
        if not viewer.steward:  # from the bins' counters, as the live feed draws it
            counts = await self.facades.views.chart_counts(fx.id)  # live: per 5 minutes
            return self.live.chart(fx, chart_from_counts(counts, fine=not whole),
                                   viewer.police_view, None if whole else LIVE_BINS)
        events = [e for e in await self.store.events(fx.id)
                  if e.kind == "incident.reported" and e.by == viewer.who]
        return render_svg_chart(chart_data(events), self.core.settings.zone, fx.kickoff)

    def _log_rows(self, fx: Fixture, viewer: Viewer, newest: list[Event], wanted: set[int],
                  snap: Snapshot) -> tuple[dict[str, dict[str, str]], list[dict[str, Any]]]:
        """The incidents the board's cards and these events touch, and the newest LOG_LINES
        log rows this member may see."""
        gm = self.ground_map(fx)
        log_ids = {int(i[4:]) for e in newest if e.kind.startswith("incident.")
                   and (i := str(e.data.get("id", "")))[4:].isdigit()}
        raw_by_n = snap.by_n(sorted(wanted | log_ids))
        raw = {f"INC-{n}": i for n, i in raw_by_n.items()}
        log_rows = []
        for ev in newest:
            inc = raw.get(str(ev.data.get("id", ""))) if ev.kind.startswith("incident.") else None
            row = event_view(ev, inc, viewer, gm.ground, self.live.names)
            if row is not None:
                log_rows.append(row)
            if len(log_rows) >= LOG_LINES:
                break
        return raw, log_rows

    def _board(self, fx: Fixture, viewer: Viewer, snap: Snapshot) -> dict[str, Any]:
        """What a member's first paint shows of a snapshot: the board's cards, the log's
        rows, the column counts, tiles, zones and the map with tonight's pins."""
        gm = self.ground_map(fx)
        events = list(snap.newest)
        newest = events[:LOG_LINES]
        mine = [b | {"closed": b.get("status") in CLOSED} for b in snap.briefs(BRIEF_FIELDS)
                if sees_incident(viewer, b)]
        columns: dict[str, list[dict[str, Any]]] = {}
        # worst first, then oldest: what the board draws first (control.js sorts alike)
        for b in sorted((b for b in mine if not b["closed"]),
                        key=lambda b: (-int(b.get("severity") or 1), b["reported_at"])):
            columns.setdefault(board_column(b.get("status", "")), []).append(b)
        wanted = {int(b["n"]) for col in columns.values() for b in col[:BOARD_CARDS]}
        # the banner's alert set is the server's: every one of them comes with the page
        alerts = [b for b in columns.get("reported", []) if alert_reason(b)]
        wanted |= {int(b["n"]) for b in alerts}
        raw, log_rows = self._log_rows(fx, viewer, newest, wanted, snap)
        if len(log_rows) < LOG_LINES == len(newest):  # some hidden from this member: older
            raw, log_rows = self._log_rows(fx, viewer, events, wanted, snap)
        # only the board's cards: the log's rows carry what they show, the rest comes after
        # the first paint (/control/incidents)
        board = {f"INC-{n}" for n in wanted}
        return {
            "incidents": {i["id"]: incident_view(i, gm.ground) for i in raw.values()
                          if i.get("id") in board and sees_incident(viewer, i)},
            "log": log_rows, "columns": {k: len(v) for k, v in columns.items()},
            "alerts": len(alerts),
            "tiles": tiles_for(snap.tiles, viewer, mine),
            "zones": {z: {"label": gm.ground.label(z), "pin": list(p)}
                      for z, p in gm.pins.items()},
            "map": render_map(gm, pin_layer(gm, mine, open_only=False)),
        }

    def _now_of(self, fx: Fixture, snap: Snapshot) -> str:
        """The screen's "now": a drill's replayed night runs on its own virtual clock, so its
        ages count from its newest event, not from this server's real time."""
        if fx.drill and snap.newest:
            return max(e.at for e in snap.newest)
        return iso(self.core.clock.now())

    async def page(self, request: web.Request) -> web.Response:
        """The live screen, bounded whatever the night: the newest log lines, the cards the
        board draws, pins and tiles from a few fields of each incident; the screen's script
        fetches the rest (/control/incidents) after the first paint. All of it from the
        fixture's snapshot (kept current by its feed): the screen resumes from its last
        event, so a first paint reads nothing of the night from the store."""
        session = await self._session(request)
        viewer = session.viewer
        fx = await self._fixture(request, session.viewer)
        gm = self.ground_map(fx)
        snap = await self.live.fixture_feed(fx.id).snapshot()
        await self.live.learn_names(list(snap.newest)[:LOG_LINES * 2])
        # made once per kind of viewer while the night stands still, not once per screen
        made = snap.made(viewer.key, lambda: self._board(fx, viewer, snap))
        by_id = {k: dict(v) for k, v in made["incidents"].items()}
        await self._with_delivery(fx, viewer, by_id)
        state = {
            "fixture": fx.id, "last": snap.last, "now": self._now_of(fx, snap),
            "virtual": fx.drill,
            "tz": self.core.settings.tz,
            "me": {"who": viewer.who, "role": viewer.role, "name": viewer.name,
                   "actions": [a for a in ACTIONS if viewer.may(a)],
                   "decisions": viewer.may("decisions")},
            "incidents": by_id, "log": made["log"], "partial": True,
            "delivery": None if viewer.steward else self.live.delivery_now(),
            "columns": made["columns"], "tiles": made["tiles"], "zones": made["zones"],
            "alerts": made["alerts"],
            "stewarding": None if viewer.steward else snap.stewarding,
        }
        body = live_page(fx, gm.ground.name, made["map"], await self._chart_svg(fx, viewer),
                         state, session.csrf, self.home)
        resp = web.Response(text=body, content_type="text/html",
                            headers={"Cache-Control": "no-store"})
        resp.enable_compression()
        return resp

    async def incidents(self, request: web.Request) -> web.Response:
        """Every incident this member may see (the screen fetches them after its first
        paint), from the fixture's snapshot."""
        session = await self._session(request, json_reply=True)
        fx = await self._fixture(request, session.viewer)
        snap = await self.live.fixture_feed(fx.id).snapshot()
        views = {i["id"]: i for i in await self._incidents(fx, session.viewer, snap)}
        await self._with_delivery(fx, session.viewer, views)
        resp = web.json_response({"incidents": views},
                                 headers={"Cache-Control": "no-store"})
        resp.enable_compression()
        return resp

    async def chart(self, request: web.Request) -> web.Response:
        """The timeline chart alone (the live screen refreshes it)."""
        session = await self._session(request)
        fx = await self._fixture(request, session.viewer)
        return web.Response(text=await self._chart_svg(fx, session.viewer),
                            content_type="image/svg+xml", headers={"Cache-Control": "no-store"})

    async def post(self, request: web.Request) -> web.Response:
        """The post-match page: summary, chart and map, printable on A4."""
        session = await self._session(request)
        viewer = session.viewer
        if viewer.steward:
            await self.access.deny(viewer.who, "post-match page as steward")
            raise web.HTTPForbidden(text=message_page(
                "Not for your role", "The post-match summary is for the control room, "
                "safety officer, police and viewers.", self.home), content_type="text/html")
        fx = await self._fixture(request, session.viewer)
        gm = self.ground_map(fx)
        tz = self.core.settings.zone
        # the same values as `matchday report --pdf` (figures, rows, generated at, chain head)
        report = await build_report(self.store, self.facades, self.live.feed, fx, gm.ground, tz,
                                    self.core.clock.now())
        fig = report.figures
        incidents = await self._incidents(fx, viewer)
        labels = {"mmss": mmss, "zone": gm.ground.label,
                  "offence": OFFENCES.label, "ban": BAN_TYPES.label,
                  "kickoff": fx.kickoff.astimezone(tz)}
        body = post_match_page(fx, gm.ground.name, fig,
                               render_map(gm, pin_layer(gm, incidents, open_only=False)),
                               await self._chart_svg(fx, viewer, whole=True), viewer.police_view,
                               labels,
                               fig["open_incidents"], report, self.home)
        return web.Response(text=body, content_type="text/html")

    async def decisions(self, request: web.Request) -> web.Response:
        """The decision log panel, for the roles that keep it (roles.toml: decisions)."""
        session = await self._session(request)
        viewer = session.viewer
        if not self.core.roles.allowed(viewer.role, "decisions"):
            await self.access.deny(viewer.who, "decision log")
            raise web.HTTPForbidden(text=message_page(
                "Not for your role", "The decision log is for the Safety Officer, the police "
                "commander and control.", self.home), content_type="text/html")
        fx = await self._fixture(request, viewer)
        view = await self.facades.decisions.read(fx.id)
        return web.Response(text=decisions_page(fx, view, self.core.settings.zone, self.home),
                            content_type="text/html")

    async def static(self, request: web.Request) -> web.Response:
        """The screen's script and style."""
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        return web.Response(body=self._static[name], content_type=STATIC[name],
                            headers={"Cache-Control": "no-cache"})

    # ---------------------------------------------------------------- live
    async def events(self, request: web.Request) -> web.StreamResponse:
        """Server-Sent Events of a fixture's log after Last-Event-ID (or ?after=)."""
        session = await self._session(request)
        viewer = session.viewer
        fx = await self._fixture(request, session.viewer)
        after = request.headers.get("Last-Event-ID") or request.query.get("after", "")
        if not STREAM_ID.fullmatch(after):
            after = await self.live.feed.last_id(fx.id)
        feed = self.live.fixture_feed(fx.id)
        gz = takes_gzip(request.headers.get("Accept-Encoding", ""))
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                   "X-Accel-Buffering": "no"}
        if gz:
            headers["Content-Encoding"] = "gzip"
        resp = web.StreamResponse(headers=headers)
        queue = await feed.subscribe(session)  # before the catch-up read: nothing falls in between
        try:
            await self.live.follow_member(viewer.who, queue)
            await resp.prepare(request)
            await self._stream(resp, session, fx, after, queue, gz)
        except (ConnectionResetError, asyncio.CancelledError, StoreUnavailable):
            pass
        finally:
            feed.unsubscribe(queue)
            self.live.unfollow_member(viewer.who, queue)
        with contextlib.suppress(Exception):
            await resp.write_eof()
        return resp

    async def _still_signed_in(self, session: Session) -> bool:
        """Is the screen's session still live, with the role it opened with?"""
        now = await self.access.session(session.sid)
        return isinstance(now, Session) and now.viewer.role == session.viewer.role

    async def _stream(self, resp: web.StreamResponse, session: Session, fx: Fixture,
                      after: str, queue: asyncio.Queue[Any], gz: bool) -> None:
        """Catch up after `after`, then every batch, each sent only after the session
        (and its role) is checked; ends at sign-out, expiry, removal or a role change."""
        viewer = session.viewer
        loop = asyncio.get_running_loop()

        def piece(text: bytes) -> bytes:
            return gzip_piece(text) if gz else text

        async def signed_out() -> bool:
            if await self._still_signed_in(session):
                return False
            await resp.write(piece(b"event: signout\ndata: {}\n\n"))
            return True

        sent = stream_key(after)
        await resp.write((GZIP_HEADER if gz else b"") + piece(b"retry: 2000\n\n"))
        while True:
            missed = await self.live.feed.after(fx.id, after, 1000)
            if not missed:
                break
            if await signed_out():
                return
            blob = Batch(await self.live.changes(fx.id, missed)).blob(viewer, self.live, gz=gz)
            if blob:
                await resp.write(blob)
            after = missed[-1].id
            sent = stream_key(after)
        pinged = loop.time()
        while True:
            try:  # (a timeout, not wait_for: no task made per batch per screen)
                async with asyncio.timeout(self.session_check_s):
                    batch = await queue.get()
            except TimeoutError:
                # idle: an expiry is noticed within session_check_s even with no revocation
                if await signed_out():
                    return
                if loop.time() - pinged >= self.heartbeat_s:
                    # an event, not a comment: the screen's watchdog hears it (a silent
                    # half-open connection is shown NOT LIVE)
                    await resp.write(piece(b"event: ping\ndata: {}\n\n"))
                    pinged = loop.time()
                continue
            # a screen that fell behind takes everything waiting in one write
            batches = [batch]
            while batch is not None and not queue.empty():
                batch = queue.get_nowait()
                batches.append(batch)
            # checked for every screen at once when the feed sent it; a screen checks for
            # itself only after a revocation, a "no" or an item sent before it subscribed
            vouched = all(isinstance(b, Batch | Notice) and b.verdicts.get(session.sid)
                          for b in batches if b is not None)
            if not vouched and await signed_out():
                return
            blobs = []
            for b in batches:
                if b is None:
                    break
                if isinstance(b, Recheck):
                    continue
                blobs.append(b.blob(viewer, self.live, sent, gz))
                if not isinstance(b, Notice) and b.changes:
                    sent = max(sent, stream_key(b.changes[-1].event.id))
            if any(blobs):
                await resp.write(b"".join(blobs))
            if batches[-1] is None:
                return  # fell too far behind: the browser reconnects and resumes

    # ---------------------------------------------------------------- actions
    async def action(self, request: web.Request) -> web.Response:
        """A board button: the same command as typed in chat, through the core."""
        session = await self._session(request, json_reply=True)
        viewer = session.viewer
        try:
            body = await request.json()
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        token = request.headers.get("X-CSRF-Token") or str(body.get("csrf", ""))
        if not self.access.csrf_ok(session, token):
            await self.access.deny(viewer.who, "action without a valid CSRF token")
            return web.json_response({"ok": False, "text": "Missing or wrong form token."},
                                     status=403)
        what, inc, press = (str(body.get(k, "")) for k in ("action", "incident", "id"))
        n = parse_incident_id(inc)
        if what not in ACTIONS or n is None or not ACTION_ID.fullmatch(press):
            return web.json_response({"ok": False, "text": "Unknown action."}, status=400)
        fx = await self._fixture(request, session.viewer)
        active = await self.core.fixture_of(viewer.who)
        if active is None or active.id != fx.id:
            return web.json_response({"ok": False, "text": "Buttons work on your own "
                                      "fixture only (/fixture use)."}, status=409)
        cmd = Command(platform="web", chat="control-room", user=viewer.who,
                      text=f"/{what} {incident_id(n)}", dedupe_key=f"web:{viewer.who}:{press}",
                      user_name=viewer.name)
        result = await self.core.handle(cmd)
        if result is None:
            return web.json_response({"ok": False, "text": "Not done."}, status=400)
        return web.json_response({"ok": result.reply.ok, "text": result.reply.text},
                                 status=200 if result.reply.ok else 409)
