"""Passwordless sign-in: one-time links bound to a member and role, and the sessions they open."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.domain.clock import iso
from bot.store.facades import StoreFacades
from bot.web.visibility import Viewer

COOKIE = "matchday_session"
LINK_PATH = "/control/login/"
CLIP = 200  # characters of a client-sent value (Origin, path) an audit entry keeps
# Refusals of clients without a session written per minute by this process; the rest are
# counted and the count goes with the next entry (anyone can send requests: none of them
# may cost a disk write each, nor push out the member audit trail).


def clip(value: str, limit: int = CLIP) -> str:
    """A client-sent value cut to `limit` characters for the audit trail."""
    return value if len(value) <= limit else value[:limit] + f"… ({len(value)} chars)"


@dataclass(frozen=True)
class Server:
    """The running control-room server links lead to, and how long its links live."""

    base: str
    link_ttl: int


@dataclass(frozen=True)
class Session:
    """A signed-in screen: who, as what role, and the token its forms must carry."""

    sid: str
    viewer: Viewer
    csrf: str
    expires_ts: int


class Access:
    """Issues links, redeems them into sessions, checks sessions on every request."""

    def __init__(self, core: Core, facades: StoreFacades) -> None:
        """`facades`: members, the audit trail and the web view's state (links and
        sessions), handed over by the composition root."""
        self.core = core
        self.members = facades.members
        self.trail = facades.audit
        web = facades.web
        self.sessions = web.sessions
        self.link_ttl = int(getattr(core.settings, "web_link_ttl_seconds", 300))
        self.session_ttl = int(getattr(core.settings, "web_session_ttl_seconds", 12 * 3600))
        self.strangers = core.strangers  # one quota for chat and web strangers

    def _now_ts(self) -> int:
        return int(self.core.clock.now().timestamp())

    async def running(self) -> Server | None:
        """The running control-room server (None: none runs, so a link would lead nowhere);
        its links live as long as it says, if shorter than this process's setting."""
        got = await self.sessions.running()
        if got is None:
            return None
        base, theirs = got
        return Server(base, min(self.link_ttl, theirs or self.link_ttl))

    async def announce(self, base: str, ttl: int) -> None:
        """This process serves the control room at `base` (and its links live link_ttl)."""
        await self.sessions.announce(base, ttl, self.link_ttl)

    async def issue_link(self, who: str, server: Server) -> str | None:
        """A one-time sign-in URL for a member (None if they are not a member)."""
        member = await self.core.member(who)
        if member is None:
            return None
        token = secrets.token_urlsafe(24)
        # Redis keeps the record a little longer than it is valid; validity is checked
        # against the bot's clock, so an expired link is refused however Redis is timed.
        now = self._now_ts()
        await self.sessions.save_link(token, who, member.role, now, now + server.link_ttl,
                                      server.link_ttl + 60)
        await self.trail.audit(who, "web.link", member.role, iso(self.core.clock.now()))
        return f"{server.base.rstrip('/')}{LINK_PATH}{token}"

    async def _member(self, who: str) -> Member | None:
        """The member as of now: read fresh (not the core's few-second cache), so a removal
        or a role change ends their screens at the next check."""
        if who in self.core.roster:
            return self.core.roster[who]
        rec = await self.members.member(who)
        if rec is None:
            return None
        platform, user = who.split(":", 1)
        return Member(platform, user, rec["role"], rec.get("name", ""), rec.get("zone", ""))

    def _link_live(self, rec: dict[str, str]) -> bool:
        """Is a link still valid now? The server redeeming it decides: its own lifetime
        counts from the issue time, whatever the issuing process (another shell's
        `matchday web-link`, a replica configured apart) promised; never past that promise."""
        if not rec.get("iat", "").isdigit() or not rec.get("exp", "").isdigit():
            return False  # a record without its issue time (older bot): ask for a new link
        now = self._now_ts()
        return now <= int(rec["exp"]) and now <= int(rec["iat"]) + self.link_ttl

    async def link_holder(self, token: str) -> Member | None:
        """Whose account a valid link opens (the link stays unused), or None."""
        if not token or len(token) > 64:
            return None
        rec = await self.sessions.peek_link(token)
        if rec is None or not self._link_live(rec):
            return None
        member = await self._member(rec["who"])
        return member if member is not None and member.role == rec["role"] else None

    async def redeem(self, token: str) -> Session | str:
        """Turn a link into a session, once; or the reason it was refused."""
        if not token or len(token) > 64:
            return "unknown link"
        rec = await self.sessions.take_link(token)
        if rec is None:
            return "unknown, used or expired link"
        if not self._link_live(rec):
            return f"expired link of {rec['who']}"
        member = await self._member(rec["who"])
        if member is None or member.role != rec["role"]:
            return f"link of {rec['who']}, who is no longer a {rec['role']}"
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        exp = self._now_ts() + self.session_ttl
        await self.sessions.open_session(sid, member.who, member.role, csrf, exp,
                                         self.session_ttl + 60)
        await self.trail.audit(member.who, "web.signin", member.role,
                                    iso(self.core.clock.now()))
        viewer = Viewer(member.who, member.role, member.name, self.core.roles)
        return Session(sid, viewer, csrf, exp)

    async def session(self, sid: str | None) -> Session | str:
        """The live session a cookie names, or why there is none. A session ends when its
        member is removed or their role changes."""
        if not sid or len(sid) > 128:
            return "no session"
        rec = await self.sessions.session(sid)
        if rec is None:
            return "unknown or ended session"
        if int(rec.get("exp", 0)) < self._now_ts():
            await self.sessions.end_session(sid, rec["who"])
            return f"expired session of {rec['who']}"
        member = await self._member(rec["who"])
        if member is None or member.role != rec["role"]:
            await self.sessions.end_sessions_of(rec["who"])
            return f"session of {rec['who']}, who is no longer a {rec['role']}"
        viewer = Viewer(member.who, member.role, member.name, self.core.roles)
        return Session(sid, viewer, rec["csrf"],
                       int(rec["exp"]))

    async def still_open(self, sessions: list[Session]) -> dict[str, bool]:
        """Which of these screens' sessions are still open with the role they opened with, in
        one read for all: a False (or a missing) one is checked again by `session`, which
        says why and ends what must end."""
        whos = sorted({s.viewer.who for s in sessions if s.viewer.who not in self.core.roster})
        exps, recs = await self.sessions.still_open([s.sid for s in sessions], whos)
        role = {who: (rec or {}).get("role") for who, rec in zip(whos, recs, strict=True)}
        now = self._now_ts()

        def member_role(who: str) -> str | None:
            m = self.core.roster.get(who)
            return m.role if m is not None else role.get(who)
        return {s.sid: exp is not None and int(exp) >= now
                and member_role(s.viewer.who) == s.viewer.role
                for s, exp in zip(sessions, exps, strict=True)}

    async def sign_out(self, session: Session) -> None:
        """End a session."""
        await self.sessions.end_session(session.sid, session.viewer.who)

    @staticmethod
    def csrf_ok(session: Session, token: str | None) -> bool:
        """Does a form's token match its session's?"""
        return bool(token) and hmac.compare_digest(session.csrf, token or "")

    async def deny(self, who: str, what: str) -> None:
        """Write a refusal to the audit trail: a member's to theirs, one of a client without
        a session to the strangers' stream (bot.core.strangers: capped, rate-limited)."""
        at = iso(self.core.clock.now())
        if who:
            await self.trail.audit(who, "refused", f"web: {what}", at)
            return
        await self.strangers.refused("web:anonymous", f"web: {what}", at)
