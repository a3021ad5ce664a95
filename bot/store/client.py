"""The only module that talks to Redis: key schema, one-round-trip writes, and reads.

Every fixture's keys share the hash tag `{<fixture>}` so one command's writes run as one
Lua script in one slot. The small directory of fixtures, members and invites lives under
the `{ops}` tag.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.domain.clock import parse_iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.incident_model import Incident
from bot.domain.incident.incident_rules import merge_raise_test, replan_test
from bot.domain.ledger import PHASE, Event, Text, Var
from bot.domain.outcomes import Reason
from bot.store.base import (
    LIVE_TTL_S,
    SEV_BAND,
    Applied,
    KeySpace,
    Refused,
    fx_prefix,
    guard,
    ops_prefix,
)
from bot.store.gateway import Gateway, Unconfirmed
from bot.store.lifecycle import (
    CLAIMED,
    OPEN_STATUSES,
    STALE,
    amend_ops,
    counter_ops,
    missing_incident,
    phase_op,
)
from bot.store.ops import (
    Del,
    FindSimilar,
    Hget,
    Hincrby,
    Hset,
    Hsetnx,
    HsetnxSince,
    Incr,
    Op,
    RequireExists,
    RequireIn,
    RequireMissing,
    ReturnHash,
    Set,
    Unless,
    When,
    WhenCmp,
    Zadd,
    ZaddScoreFrom,
    ZaddSince,
    Zrem,
    ZremByField,
    json_value,
    log_event,
    log_restricted,
)
from bot.store.timing_keys import timing_ops

__all__ = ["Similar", "Store", "Unconfirmed"]

N = Var("n")  # the number the write just took
SIMILAR = Var("similar")  # the open incident a report joined (set by FindSimilar)
INC_N, ID_N = "inc:" + N, "INC-" + N
FORM_DONE_TTL = 3600  # how long a second tap on a finished guided form still finds its number

log = logging.getLogger(__name__)


@dataclass
class Similar:
    """How to spot 'the same incident' inside the report script, and the merge to write."""

    since: int  # epoch seconds: only incidents reported since then
    near: list[str]  # zones that count as the same place (same or adjacent)
    event: Event  # the incident.merged event (its data's id None: the store fills it in)
    token: str  # names the merge, so the reporter can split it out again
    record: dict[str, Any]  # what a split needs to log the report on its own
    severity: int = 0  # the report's severity: a higher one raises the incident's
    ack_after_s: int | None = None  # first escalation tier of that severity (None: no tiers)



def _raise_ops(sim: Similar) -> list[Op]:
    """Inside the merge: when the report's severity is above the incident's, raise it (the
    highest reported wins) as a recorded amendment, move the counters and the open order,
    and re-plan escalation on the new severity's timers if still unacknowledged."""
    key, n, new = "inc:" + SIMILAR, SIMILAR, sim.severity
    old = Var("oldsev")
    ev = Event("incident.amended", sim.event.at, sim.event.by, sim.event.role, {
        "id": "INC-" + n, "old": {"severity": old}, "new": {"severity": str(new)},
        "why": "a merged report", "merged": sim.token, "status": Var("simstatus"),
        "text": "severity " + old + f" → {new} (a merged report)"})
    replan: list[Op] = [
        Hset(key, {"esc_next": "0"}),
        ZaddScoreFrom("esc", key, "reported_ts", sim.ack_after_s, n + ":ack")
        if sim.ack_after_s is not None else Zrem("esc", n + ":ack"),
    ]
    return [
        Hget(key, "severity", "oldsev", "0"),
        WhenCmp("oldsev", *merge_raise_test(new), [
            Hget(key, "status", "simstatus", ""),
            Hsetnx(key, "orig_severity", old),
            Hset(key, {"severity": str(new), "amended_at": sim.event.at}),
            Hincrby(key, "amendments", 1),
            *log_event(ev),
            Hincrby("counts", "inc:sev:" + old, -1),
            Hincrby("counts", f"inc:sev:{new}", 1),
            ZaddScoreFrom("open", key, "reported_ts", (5 - new) * SEV_BAND, n),
            WhenCmp("simstatus", *replan_test(), replan),
        ]),
    ]


def _merge_ops(sim: Similar, reporter: str, last_ttl: int) -> list[Op]:
    key = "inc:" + SIMILAR
    return [
        Hincrby(key, "merged", 1),
        Hset(key, {"updated_at": sim.event.at}),
        *log_event(sim.event),
        *(_raise_ops(sim) if sim.severity else []),
        Set(f"mrg:{sim.token}", json_value(sim.record), 3600),  # type: ignore[arg-type]
        Set(f"last:{reporter}", SIMILAR + f" {int(parse_iso(sim.event.at).timestamp())}",
            last_ttl),
        ReturnHash(key),
    ]


class Store:
    """The incident log: fixtures, incidents and their lifecycle, the fixture's log and its
    counters, over the gateway (bot/store/gateway.py). A write that adds deadlines expects its
    caller to have listed the fixture first (bot/store/deadlines.py index_escalation)."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    @classmethod
    def from_url(cls, url: str, dedupe_ttl: int = 86400, *,
                 observe_latency: Callable[[float], None] | None = None,
                 observe_answer: Callable[[bool], None] | None = None) -> Store:
        """Connect lazily to a REDIS_URL (plain, Sentinel or Cluster; see connect.py)."""
        return cls(Gateway.from_url(url, dedupe_ttl, observe_latency=observe_latency,
                                    observe_answer=observe_answer))

    async def close(self) -> None:
        """Close connections."""
        await self.gateway.close()

    async def reset_for_tests(self) -> None:
        """Empty the database (tests and benches only)."""
        await self.gateway.reset_for_tests()

    # ---------------------------------------------------------------- fixtures
    async def create_fixture(self, fx: Fixture, ev: Event, dedupe: str,
                             restricted: Event | None = None) -> Applied:
        """Create a fixture (refused if the id exists) and list it in the directory; a
        restricted event goes to the fixture's restricted log in the same write."""
        ops: list[Op] = [
            RequireMissing("meta", guard(Reason.FIXTURE_EXISTS, fx.id)),
            Hset("meta", fx.to_hash()),
            *log_restricted(restricted),
            *log_event(ev),
        ]
        applied = await self.gateway.apply(fx_prefix(fx.id, self.space), ops, dedupe)
        # The directory is an idempotent index in another slot; re-adding is harmless.
        await self.gateway.call(lambda r: r.sadd(_directory(fx.drill, self.space), fx.id))
        return applied

    async def update_fixture(self, fx_id: str, fields: dict[str, str], ev: Event,
                             dedupe: str, restricted: Event | None = None,
                             timing: str = "") -> Applied:
        """Change fixture fields (category, kick-off, phase, status) and log it (restricted
        fields in the restricted log, and the key timing a phase starts, in the same write)."""
        ops: list[Op] = [
            RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)),
            Hset("meta", fields),
            *log_restricted(restricted),
            *log_event(ev),
            *(timing_ops(timing, ev) if timing else ()),
            ReturnHash("meta"),
        ]
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)

    async def fixture(self, fx_id: str) -> Fixture | None:
        """One fixture, or None."""
        h = await self.gateway.call(lambda r: r.hgetall(fx_prefix(fx_id, self.space) + "meta"))
        return Fixture.from_hash(h) if h else None

    async def fixtures(self, *, drill: bool = False) -> list[Fixture]:
        """Every live fixture in the directory (drill=True: every drill's), by kick-off."""
        ids = sorted(await self.gateway.call(lambda r: r.smembers(_directory(drill, self.space))))
        pipe = self.gateway.pipeline()
        for i in ids:
            pipe.hgetall(fx_prefix(i, self.space) + "meta")
        rows = await self.gateway.call(pipe.execute()) if ids else []
        return sorted((Fixture.from_hash(h) for h in rows if h), key=lambda f: f.kickoff)

    # ---------------------------------------------------------------- incidents
    async def report_incident(self, fx_id: str, fields: dict[str, str], ev: Event,
                              reported_ts: int, dedupe: str, drop_form: str = "",
                              form_id: str = "",
                              last_ttl: int = 900,
                              deadlines: dict[str, int] | None = None,
                              similar: Similar | None = None,
                              outbox: list[Op] | None = None,
                              also: list[Op] | None = None) -> Applied:
        """Log a new incident: number, hash, event, counters, open index, escalation
        deadlines (tag -> due epoch seconds, see bot.schedule.escalation); one round trip.

        With `similar`, the same script first looks for an open incident of the same type
        nearby; if there is one the report is added to it instead (var `similar` is set) and
        nothing new is counted. `outbox` ops (bot.store.outbox.ops) are written only for a
        new incident, in the same script, and so are `also` ops (what caused the report,
        e.g. a failed inspection item, numbered with the incident's Var("n"))."""
        sev = int(fields["severity"])
        key = INC_N
        ev.data = _numbered(ev.data, "id", ID_N)  # None: the number this write takes
        if similar is not None:  # ... or the one the report joins
            similar.event.data = _numbered(similar.event.data, "id", "INC-" + SIMILAR)
            similar.record = _numbered(similar.record, "first", SIMILAR)
        head: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)), phase_op()]
        if similar is not None:
            head += [FindSimilar(f"open:t:{fields['type']}", similar.since, fields["type"],
                                 similar.near, fields.get("affiliation", "unknown"),
                                 fields["location"], "similar"),
                     When("similar", _merge_ops(similar, fields["reporter"], last_ttl))]
        ops: list[Op] = [
            Incr("seq", "n"),
            Hset(key, {"n": N, "id": ID_N, "phase": PHASE,
                       "reported_ts": str(reported_ts), **fields,
                       "esc_next": "0", "remind_n": "0"}),
            *log_event(ev),
            *counter_ops(ev),
            Zadd("open", (5 - sev) * SEV_BAND + reported_ts, N),
            Zadd("all", reported_ts, N),
            Zadd("unacked", reported_ts, N),
            # the reporter's latest incident: where their next text or photo goes
            Set(f"last:{fields['reporter']}", N + f" {reported_ts}", last_ttl),
            *[Zadd("esc", due, N + f":{tag}") for tag, due in (deadlines or {}).items()],
            Zadd(f"open:t:{fields['type']}", reported_ts, N),
            *(outbox or []),
            *(also or []),
            ReturnHash(key),
        ]
        if drop_form:
            ops.append(Del(f"form:{drop_form}"))
            head.append(Del(f"form:{drop_form}"))
        if drop_form and form_id:  # a second tap on the finished form finds its number
            done = f"formdone:{drop_form}"
            ops.append(Set(done, form_id + " " + N, FORM_DONE_TTL))
            if similar is not None:
                head.append(When("similar", [Set(done, form_id + " " + SIMILAR,
                                                 FORM_DONE_TTL)]))
        if similar is not None:
            return await self.gateway.apply(
                fx_prefix(fx_id, self.space), [*head, Unless("similar", ops)], dedupe)
        return await self.gateway.apply(fx_prefix(fx_id, self.space), head + ops, dedupe)

    async def change_status(self, fx_id: str, n: int, to: str, allowed_from: list[str],
                            ev: Event, now_ts: int, dedupe: str,
                            refusal: Reason = Reason.STATUS,
                            fields: dict[str, str] | None = None,
                            deadlines: dict[str, int] | None = None,
                            first: Event | None = None) -> Applied:
        """Move an incident to a new status if its current one allows it (else Refused with
        `refusal` and the status found); an acknowledgement stops its escalation deadlines
        and a close its reminders, in the same round trip. An event "from" of None becomes
        the status the move was from."""
        key = f"inc:{n}"
        cls = ev.data.get("cls", "")
        if "from" in ev.data and ev.data["from"] is None:  # the status read in the script
            ev.data = {k: Var("from") if k == "from" else v for k, v in ev.data.items()}
        ops: list[Op] = [
            RequireExists(key, missing_incident(n)),
            RequireIn(key, "status", allowed_from, guard(refusal, n, Var("current"))),
            Hget(key, "status", "from"),
            # `first`: an event the move implies, logged just before it (a police handover of
            # an unacknowledged incident is its acknowledgement)
            *(log_event(first) if first is not None else []),
            Hset(key, {"status": to, f"{to}_at": ev.at, f"{to}_by": ev.by,
                       "updated_at": ev.at, **(fields or {})}),
            *log_event(ev),
            *counter_ops(ev),
        ]
        if to != "reported":
            ops += [ZaddSince("tta", key, "reported_ts", now_ts, str(n)),
                    HsetnxSince(key, "tta_s", "reported_ts", now_ts),
                    Zrem("unacked", str(n)), Zrem("esc", f"{n}:ack")]
        if cls == "close":
            ops += [ZaddSince("ttc", key, "reported_ts", now_ts, str(n)),
                    HsetnxSince(key, "ttc_s", "reported_ts", now_ts),
                    Zrem("open", str(n)), Zrem("esc", f"{n}:open"),
                    ZremByField("open:t:", key, "type", str(n))]
        elif cls == "reopen":
            ops.append(ZaddScoreFrom("open", key, "reported_ts",
                                     (5 - int(ev.data.get("severity", 3))) * SEV_BAND, str(n)))
        ops += [Zadd("esc", due, f"{n}:{tag}") for tag, due in (deadlines or {}).items()]
        ops.append(ReturnHash(key))
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)

    async def add_to_incident(self, fx_id: str, n: int, ev: Event, dedupe: str,
                              counter_field: str = "updates",
                              live: dict[str, dict[str, Any]] | None = None) -> Applied:
        """Append an update or evidence to an incident's timeline; `live` keeps each live
        location's first position under its key, for its later positions (move_live)."""
        key = f"inc:{n}"
        ops: list[Op] = [
            RequireExists(key, missing_incident(n)),
            phase_op(),
            Hincrby(key, counter_field, 1),
            Hset(key, {"updated_at": ev.at}),
            *log_event(ev),
            *(Set(f"live:{k}", json.dumps({"n": n, **pos}), LIVE_TTL_S)
              for k, pos in (live or {}).items()),
            ReturnHash(key),
        ]
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)

    async def applied_vars(self, fx_id: str, dedupe: str) -> dict[str, str] | None:
        """What an already-applied write (by its dedupe key) set, or None if never applied."""
        key = f"{fx_prefix(fx_id, self.space)}dedupe:{dedupe}"
        raw = await self.gateway.call(lambda r: r.get(key))
        return json.loads(raw) if raw else None

    async def last_report_of(self, fx_id: str, who: str) -> tuple[int, int | None] | None:
        """(incident number, epoch seconds of the report) of a reporter's latest report
        (within its TTL), or None; the time is None for a record written before it was kept."""
        raw = await self.gateway.call(lambda r: r.get(f"{fx_prefix(fx_id, self.space)}last:{who}"))
        if not raw:
            return None
        n, _, ts = raw.partition(" ")
        return int(n), int(ts) if ts else None

    async def incident(self, fx_id: str, n: int) -> Incident | None:
        """One incident's current view, or None."""
        h = await self.gateway.call(lambda r: r.hgetall(f"{fx_prefix(fx_id, self.space)}inc:{n}"))
        return Incident.from_hash(h) if h else None

    async def incidents(self, fx_id: str, ns: list[int]) -> list[Incident | None]:
        """Several incidents' current views (None for one that is not there), one round
        trip."""
        if not ns:
            return []
        pipe = self.gateway.pipeline()
        for n in ns:
            pipe.hgetall(f"{fx_prefix(fx_id, self.space)}inc:{n}")
        return [Incident.from_hash(h) if h else None for h in await self.gateway.call(
            pipe.execute())]

    async def open_incidents(self, fx_id: str,
                             limit: int = 15) -> tuple[list[Incident], dict[int, int]]:
        """Open incidents, most severe then oldest first; open counts by severity (and
        key 0: the unacknowledged count)."""
        p = fx_prefix(fx_id, self.space)
        pipe = self.gateway.pipeline()
        pipe.zrange(p + "open", 0, limit - 1)
        for sev in range(1, 6):
            lo = (5 - sev) * SEV_BAND
            pipe.zcount(p + "open", lo, lo + SEV_BAND - 1)
        pipe.zcard(p + "unacked")
        res = await self.gateway.call(pipe.execute())
        ids, by_sev = res[0], {sev: res[sev] for sev in range(1, 6)}
        by_sev[0] = res[6]  # key 0: how many are still unacknowledged
        if not ids:
            return [], by_sev
        pipe = self.gateway.pipeline()
        for n in ids:
            pipe.hgetall(f"{p}inc:{n}")
        return [Incident.from_hash(h) for h in await self.gateway.call(pipe.execute()) if h], by_sev

    # ---------------------------------------------------------------- views
    async def counts(self, fx_id: str) -> dict[str, int]:
        """The fixture's derived counters."""
        h = await self.gateway.call(lambda r: r.hgetall(fx_prefix(fx_id, self.space) + "counts"))
        return {k: int(v) for k, v in h.items() if int(v)}

    async def counts_many(self, fx_ids: list[str]) -> dict[str, dict[str, int]]:
        """Derived counters of several fixtures in one pipelined round trip."""
        if not fx_ids:
            return {}
        pipe = self.gateway.pipeline()
        for i in fx_ids:
            pipe.hgetall(fx_prefix(i, self.space) + "counts")
        rows = await self.gateway.call(pipe.execute())
        return {i: {k: int(v) for k, v in h.items() if int(v)}
                for i, h in zip(fx_ids, rows, strict=True)}

    async def events(self, fx_id: str, start: str = "-", count: int | None = None) -> list[Event]:
        """The fixture's log in order (all of it unless count is given)."""
        rows = await self.gateway.call(
            lambda r: r.xrange(fx_prefix(fx_id, self.space) + "log", start, "+", count=count))
        return [Event.from_stream(sid, f) for sid, f in rows]

    async def log_once(self, fx_id: str, ev: Event, extra: list[Op], once: str) -> bool:
        """Log a system event (and its outbox entries) once for `once`, whichever replica
        asks first: False when it was logged already."""
        applied = await self.gateway.apply(fx_prefix(fx_id, self.space), log_event(ev) + extra,
                                           dedupe=once)
        return not applied.duplicate

    # ---------------------------------------------------------------- claims, amendments, merges
    async def _claim(self, fx_id: str, n: int, ev: Event, guard: list[Op], writes: list[Op],
                     member: str) -> Incident | None:
        key = f"inc:{n}"
        ops: list[Op] = [
            RequireExists(key, STALE), *guard, phase_op(), *writes,
            Hset(key, {"updated_at": ev.at}), *log_event(ev), ReturnHash(key),
        ]
        try:
            applied = await self.gateway.apply(fx_prefix(fx_id, self.space), ops)
        except Refused as exc:
            if exc.reason is Reason.STALE:  # the deadline no longer applies
                await self.gateway.call(
                    lambda r: r.zrem(fx_prefix(fx_id, self.space) + "esc", member))
            return None
        return applied.incident

    async def claim_tier(self, fx_id: str, n: int, tier: int, ev: Event,
                         next_due: int | None, outbox: list[Op] | None = None
                         ) -> Incident | None:
        """Fire escalation tier `tier` of INC-n once: log it, move the deadline on and put
        its alerts (`outbox` ops) in the outbox, all in one script; None if it was
        acknowledged meanwhile or another replica fired it."""
        key, member = f"inc:{n}", f"{n}:ack"
        guard: list[Op] = [RequireIn(key, "status", ["reported"], STALE),
                           RequireIn(key, "esc_next", [str(tier)], CLAIMED)]
        writes: list[Op] = [
            Hset(key, {"esc_next": str(tier + 1), "escalated_at": ev.at,
                       "escalated_tier": str(tier + 1)}),
            Zadd("esc", next_due, member) if next_due is not None else Zrem("esc", member),
            *(outbox or []),
        ]
        return await self._claim(fx_id, n, ev, guard, writes, member)

    async def claim_reminder(self, fx_id: str, n: int, k: int, ev: Event,
                             next_due: int, outbox: list[Op] | None = None
                             ) -> Incident | None:
        """Send open-too-long reminder k of INC-n once (its messages, `outbox` ops, written
        in the same script) and schedule the next one."""
        key, member = f"inc:{n}", f"{n}:open"
        guard: list[Op] = [RequireIn(key, "status", OPEN_STATUSES, STALE),
                           RequireIn(key, "remind_n", [str(k)], CLAIMED)]
        writes: list[Op] = [Hset(key, {"remind_n": str(k + 1)}), Zadd("esc", next_due, member),
                            *(outbox or [])]
        return await self._claim(fx_id, n, ev, guard, writes, member)

    async def amend_incident(self, fx_id: str, n: int, old: dict[str, str],
                             new: dict[str, str], ev: Event, dedupe: str,
                             ack_due: int | None) -> Applied:
        """Correct type/severity/location: guarded on the values read, the originals kept in
        orig_* fields, counters moved, open order and escalation re-planned; one round trip."""
        guards, writes = amend_ops(n, old, new, ev, ack_due)
        ops: list[Op] = [RequireExists(f"inc:{n}", missing_incident(n)), *guards, phase_op(),
                         *writes, ReturnHash(f"inc:{n}")]
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)

    async def unmerge(self, fx_id: str, n: int, ev: Event,
                      lower: tuple[str, str, Event, int | None] | None = None) -> Applied:
        """Record on INC-n that one merged report became its own incident; with `lower`
        (old severity, new severity, the amendment event, the new first escalation due) the
        severity that report raised comes down in the same round trip (guarded on the old)."""
        key = f"inc:{n}"
        guards: list[Op] = []
        writes: list[Op] = []
        if lower is not None:
            old, new, amend, ack_due = lower
            guards, writes = amend_ops(n, {"severity": old}, {"severity": new}, amend, ack_due)
        ops: list[Op] = [RequireExists(key, missing_incident(n)), *guards, phase_op(),
                         Hincrby(key, "merged", -1), *log_event(ev), *writes,
                         ReturnHash(key)]
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops)


def _numbered(data: dict[str, Any], name: str, value: Text) -> dict[str, Any]:
    """`data` with its `name` filled in by the store's variable when the caller left it None
    (in place, so the order of the fields is kept)."""
    if name not in data or data[name] is not None:
        return data
    return {k: value if k == name else v for k, v in data.items()}


def _directory(drill: bool, space: KeySpace) -> str:
    """Live fixtures and drills' fixtures are listed apart: nothing that walks the live
    directory (scheduler, delivery, retention, season figures) ever meets a drill."""
    return ops_prefix(space) + ("fixtures:drill" if drill else "fixtures")

