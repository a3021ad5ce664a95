"""The only module that talks to Redis: key schema, one-round-trip writes, and reads.

Every fixture's keys share the hash tag `{<fixture>}` so one command's writes run as one
Lua script in one slot. The small directory of fixtures, members and invites lives under
the `{ops}` tag.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.domain.ledger import Event, deltas
from bot.domain.models import Fixture

OPS = "md:{ops}:"
SEV_BAND = 10**11  # open-incident score = (5 - severity) * band + reported epoch seconds


class StoreUnavailable(Exception):
    """Redis did not answer: nothing was written."""


class Refused(Exception):
    """A guard in the write refused the command: nothing was written."""


@dataclass
class Applied:
    """What a write returned: variables it set (e.g. the new incident number) and hashes."""

    duplicate: bool
    vars: dict[str, str] = field(default_factory=dict)
    hashes: list[dict[str, str]] = field(default_factory=list)


def fx_prefix(fixture_id: str) -> str:
    """Key prefix of one fixture (its hash tag)."""
    return f"md:{{{fixture_id}}}:"


def var(name: str) -> str:
    """A placeholder the write script fills with one of its variables (e.g. "n")."""
    return f"\x01{name}\x01"


def fill(text: str, values: dict[str, str]) -> str:
    """Fill placeholders in Python as the script did (for the copy a handler keeps)."""
    for k, v in values.items():
        text = text.replace(var(k), v)
    return text


def _hash(flat: list[str]) -> dict[str, str]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


@dataclass
class Similar:
    """How to spot 'the same incident' inside the report script, and the merge to write."""

    since: int  # epoch seconds: only incidents reported since then
    near: list[str]  # zones that count as the same place (same or adjacent)
    event: Event  # the incident.merged event (its data's id is "INC-\x01similar\x01")
    token: str  # names the merge, so the reporter can split it out again
    record: str  # what a split needs to log the report on its own (JSON)


def _merge_ops(sim: Similar, reporter: str, last_ttl: int) -> list[list[Any]]:
    key = "inc:\x01similar\x01"
    return [
        ["hincrby", key, "merged", 1],
        ["hset", key, "updated_at", sim.event.at],
        ["xadd", "log", *sim.event.fields()],
        ["set", f"mrg:{sim.token}", sim.record, 3600],
        ["set", f"last:{reporter}", "\x01similar\x01", last_ttl],
        ["return_hash", key],
    ]


def counter_ops(ev: Event) -> list[list[Any]]:
    """HINCRBY ops for an event's counter deltas."""
    return [["hincrby", "counts", k, v] for k, v in deltas(ev).items()]


class Store:
    """Async facade over Redis for the whole product."""

    def __init__(self, client: aioredis.Redis, dedupe_ttl: int = 86400) -> None:
        self.r = client
        self.dedupe_ttl = dedupe_ttl
        lua = resources.files("bot.store").joinpath("apply.lua").read_text()
        self._apply = self.r.register_script(lua)

    @classmethod
    def from_url(cls, url: str, dedupe_ttl: int = 86400) -> Store:
        """Connect lazily to a Redis URL; short timeouts so an outage answers fast."""
        # One immediate retry, no backoff: an outage must answer "not logged" in seconds,
        # and a retried write is safe because every write carries its dedupe key.
        client = aioredis.Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=2, socket_timeout=5,
            health_check_interval=15, retry=Retry(NoBackoff(), 1),
        )
        return cls(client, dedupe_ttl)

    async def close(self) -> None:
        """Close connections."""
        await self.r.aclose()

    async def ping(self) -> None:
        """Raise StoreUnavailable unless Redis answers."""
        await self._call(self.r.ping())

    async def _call(self, awaitable: Any) -> Any:
        try:
            return await awaitable
        except (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from None
        except RedisError as exc:
            if "LOADING" in str(exc) or "MASTERDOWN" in str(exc):
                raise StoreUnavailable(str(exc)) from None
            raise

    async def apply(self, prefix: str, ops: list[list[Any]], dedupe: str = "") -> Applied:
        """Run one command's ops atomically in one round trip; raise Refused on a guard."""
        res = await self._call(
            self._apply(keys=[prefix], args=[dedupe, self.dedupe_ttl, json.dumps(ops)])
        )
        status = res[0]
        if status == "refused":
            raise Refused(res[1])
        if status == "dup":
            return Applied(True, json.loads(res[1]))
        return Applied(False, json.loads(res[1]) if res[1] != "{}" else {},
                       [_hash(h) for h in res[2]])

    # ---------------------------------------------------------------- fixtures
    async def create_fixture(self, fx: Fixture, ev: Event, dedupe: str) -> Applied:
        """Create a fixture (refused if the id exists) and list it in the directory."""
        ops = [
            ["require_missing", "meta", f"Fixture {fx.id} already exists."],
            ["hset", "meta", *[x for kv in fx.to_hash().items() for x in kv]],
            ["xadd", "log", *ev.fields()],
        ]
        applied = await self.apply(fx_prefix(fx.id), ops, dedupe)
        # The directory is an idempotent index in another slot; re-adding is harmless.
        await self._call(self.r.sadd(OPS + "fixtures", fx.id))
        return applied

    async def update_fixture(self, fx_id: str, fields: dict[str, str], ev: Event,
                             dedupe: str) -> Applied:
        """Change fixture fields (category, kick-off, phase, status) and log it."""
        ops = [
            ["require_exists", "meta", f"No fixture {fx_id}."],
            ["hset", "meta", *[x for kv in fields.items() for x in kv]],
            ["xadd", "log", *ev.fields()],
            ["return_hash", "meta"],
        ]
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    async def fixture(self, fx_id: str) -> Fixture | None:
        """One fixture, or None."""
        h = await self._call(self.r.hgetall(fx_prefix(fx_id) + "meta"))
        return Fixture.from_hash(h) if h else None

    async def fixtures(self) -> list[Fixture]:
        """Every fixture in the directory, by kick-off."""
        ids = sorted(await self._call(self.r.smembers(OPS + "fixtures")))
        pipe = self.r.pipeline(transaction=False)
        for i in ids:
            pipe.hgetall(fx_prefix(i) + "meta")
        rows = await self._call(pipe.execute()) if ids else []
        return sorted((Fixture.from_hash(h) for h in rows if h), key=lambda f: f.kickoff)

    async def active_fixture_id(self) -> str | None:
        """The fixture commands apply to."""
        return await self._call(self.r.get(OPS + "active"))

    async def set_active_fixture(self, fx_id: str) -> None:
        """Make a fixture the one commands apply to."""
        await self._call(self.r.set(OPS + "active", fx_id))

    # ---------------------------------------------------------------- incidents
    async def report_incident(self, fx_id: str, fields: dict[str, str], ev: Event,
                              reported_ts: int, dedupe: str, drop_form: str = "",
                              last_ttl: int = 900,
                              deadlines: dict[str, int] | None = None,
                              similar: Similar | None = None,
                              outbox: list[list[Any]] | None = None) -> Applied:
        """Log a new incident: number, hash, event, counters, open index, escalation
        deadlines (tag -> due epoch seconds, see bot.schedule.escalation); one round trip.

        With `similar`, the same script first looks for an open incident of the same type
        nearby; if there is one the report is added to it instead (var `similar` is set) and
        nothing new is counted. `outbox` ops (bot.store.outbox.ops) are written only for a
        new incident, in the same script."""
        sev = int(fields["severity"])
        head: list[list[Any]] = [
            ["require_exists", "meta", f"No fixture {fx_id}."],
            ["hget", "meta", "phase", "phase", "pre"],
        ]
        if similar is not None:
            merge = _merge_ops(similar, fields["reporter"], last_ttl)
            head += [["find_similar", f"open:t:{fields['type']}", similar.since,
                      fields["type"], similar.near, fields.get("affiliation", "unknown"),
                      fields["location"], "similar"],
                     ["skip_unless", "similar", len(merge)], *merge]
        ops: list[list[Any]] = [
            ["incr", "seq", "n"],
            ["hset", "inc:\x01n\x01", "n", "\x01n\x01", "id", "INC-\x01n\x01",
             "phase", "\x01phase\x01", "reported_ts", str(reported_ts),
             *[x for kv in fields.items() for x in kv]],
            ["xadd", "log", *ev.fields()],
            *counter_ops(ev),
            ["zadd", "open", (5 - sev) * SEV_BAND + reported_ts, "\x01n\x01"],
            ["zadd", "all", reported_ts, "\x01n\x01"],
            ["zadd", "unacked", reported_ts, "\x01n\x01"],
            # the reporter's latest incident: where their next text or photo goes
            ["set", f"last:{fields['reporter']}", "\x01n\x01", last_ttl],
            ["hset", "inc:\x01n\x01", "esc_next", "0", "remind_n", "0"],
            *[["zadd", "esc", due, f"\x01n\x01:{tag}"] for tag, due in (deadlines or {}).items()],
            ["zadd", f"open:t:{fields['type']}", reported_ts, "\x01n\x01"],
            *(outbox or []),
            ["return_hash", "inc:\x01n\x01"],
        ]
        if drop_form:
            ops.append(["del", f"form:{drop_form}"])
            head.append(["del", f"form:{drop_form}"])
        if similar is not None:
            head.append(["skip_if", "similar", len(ops)])
        return await self.apply(fx_prefix(fx_id), head + ops, dedupe)

    async def change_status(self, fx_id: str, n: int, to: str, allowed_from: list[str],
                            ev: Event, now_ts: int, dedupe: str, refusal: str,
                            fields: dict[str, str] | None = None,
                            deadlines: dict[str, int] | None = None) -> Applied:
        """Move an incident to a new status if its current one allows it; an acknowledgement
        stops its escalation deadlines and a close its reminders, in the same round trip."""
        key = f"inc:{n}"
        cls = ev.data.get("cls", "")
        ops: list[list[Any]] = [
            ["require_exists", key, f"No incident INC-{n} in this fixture."],
            ["require_in", key, "status", allowed_from, refusal],
            ["hget", key, "status", "from"],
            ["hset", key, "status", to, f"{to}_at", ev.at, f"{to}_by", ev.by,
             "updated_at", ev.at, *[x for kv in (fields or {}).items() for x in kv]],
            ["xadd", "log", *ev.fields()],
            *counter_ops(ev),
        ]
        if to != "reported":
            ops += [["zadd_since", "tta", key, "reported_ts", now_ts, str(n)],
                    ["hsetnx_since", key, "tta_s", "reported_ts", now_ts],
                    ["zrem", "unacked", str(n)], ["zrem", "esc", f"{n}:ack"]]
        if cls == "close":
            ops += [["zadd_since", "ttc", key, "reported_ts", now_ts, str(n)],
                    ["hsetnx_since", key, "ttc_s", "reported_ts", now_ts],
                    ["zrem", "open", str(n)], ["zrem", "esc", f"{n}:open"],
                    ["zrem_by_field", "open:t:", key, "type", str(n)]]
        elif cls == "reopen":
            ops.append(["zadd_score_from", "open", key, "reported_ts",
                        (5 - int(ev.data.get("severity", 3))) * SEV_BAND, str(n)])
        ops += [["zadd", "esc", due, f"{n}:{tag}"] for tag, due in (deadlines or {}).items()]
        ops.append(["return_hash", key])
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    async def add_to_incident(self, fx_id: str, n: int, ev: Event, dedupe: str,
                              counter_field: str = "updates") -> Applied:
        """Append an update or evidence to an incident's timeline."""
        key = f"inc:{n}"
        ops: list[list[Any]] = [
            ["require_exists", key, f"No incident INC-{n} in this fixture."],
            ["hget", "meta", "phase", "phase", "pre"],
            ["hincrby", key, counter_field, 1],
            ["hset", key, "updated_at", ev.at],
            ["xadd", "log", *ev.fields()],
            ["return_hash", key],
        ]
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    async def applied_vars(self, fx_id: str, dedupe: str) -> dict[str, str] | None:
        """What an already-applied write (by its dedupe key) set, or None if never applied."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}dedupe:{dedupe}"))
        return json.loads(raw) if raw else None

    async def last_incident_of(self, fx_id: str, who: str) -> int | None:
        """The incident a reporter logged most recently (within its TTL), or None."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}last:{who}"))
        return int(raw) if raw else None

    async def incident(self, fx_id: str, n: int) -> dict[str, str] | None:
        """One incident's current view, or None."""
        h = await self._call(self.r.hgetall(f"{fx_prefix(fx_id)}inc:{n}"))
        return h or None

    async def open_incidents(self, fx_id: str, limit: int = 15) -> tuple[list[dict], dict]:
        """Open incidents, most severe then oldest first; open counts by severity (and
        key 0: the unacknowledged count)."""
        p = fx_prefix(fx_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.zrange(p + "open", 0, limit - 1)
        for sev in range(1, 6):
            lo = (5 - sev) * SEV_BAND
            pipe.zcount(p + "open", lo, lo + SEV_BAND - 1)
        pipe.zcard(p + "unacked")
        res = await self._call(pipe.execute())
        ids, by_sev = res[0], {sev: res[sev] for sev in range(1, 6)}
        by_sev[0] = res[6]  # key 0: how many are still unacknowledged
        if not ids:
            return [], by_sev
        pipe = self.r.pipeline(transaction=False)
        for n in ids:
            pipe.hgetall(f"{p}inc:{n}")
        return [h for h in await self._call(pipe.execute()) if h], by_sev

    # ---------------------------------------------------------------- police
    async def record_police(self, fx_id: str, kind: str, fields: dict[str, str], ev: Event,
                            dedupe: str, link: int | None) -> Applied:
        """Record an arrest or a ban (kind 'arr' or 'ban') with counters and incident link."""
        ops: list[list[Any]] = [["require_exists", "meta", f"No fixture {fx_id}."]]
        if link is not None:
            ops.append(["require_exists", f"inc:{link}", f"No incident INC-{link} to link."])
        ops += [
            ["hget", "meta", "phase", "phase", "pre"],
            ["incr", f"{kind}seq", "n"],
            ["hset", f"{kind}:\x01n\x01", "n", "\x01n\x01", "phase", "\x01phase\x01",
             *[x for kv in fields.items() for x in kv]],
            ["xadd", "log", *ev.fields()],
            *counter_ops(ev),
        ]
        if link is not None:
            count = int(ev.data.get("count", 1))
            ops.append(["hincrby", f"inc:{link}", "arrests" if kind == "arr" else "bans", count])
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    # ---------------------------------------------------------------- views
    async def counts(self, fx_id: str) -> dict[str, int]:
        """The fixture's derived counters."""
        h = await self._call(self.r.hgetall(fx_prefix(fx_id) + "counts"))
        return {k: int(v) for k, v in h.items() if int(v)}

    async def response_times(self, fx_id: str) -> dict[str, float | int | None]:
        """Median and worst seconds to acknowledge and to close (O(log n) via sorted sets)."""
        p = fx_prefix(fx_id)
        pipe = self.r.pipeline(transaction=False)
        for z in ("tta", "ttc"):
            pipe.zcard(p + z)
        res = await self._call(pipe.execute())
        out: dict[str, float | int | None] = {"acknowledged": res[0], "closed": res[1]}
        pipe = self.r.pipeline(transaction=False)
        for z, n in (("tta", res[0]), ("ttc", res[1])):
            lo, hi = (n - 1) // 2, n // 2
            pipe.zrange(p + z, lo, hi, withscores=True)
            pipe.zrange(p + z, -1, -1, withscores=True)
        rows = await self._call(pipe.execute())
        for i, name in enumerate(("ack", "close")):
            mid, worst = rows[2 * i], rows[2 * i + 1]
            out[f"median_{name}_s"] = (sum(s for _, s in mid) / len(mid)) if mid else None
            out[f"worst_{name}_s"] = worst[0][1] if worst else None
        return out

    async def events(self, fx_id: str, start: str = "-", count: int | None = None) -> list[Event]:
        """The fixture's log in order (all of it unless count is given)."""
        rows = await self._call(self.r.xrange(fx_prefix(fx_id) + "log", start, "+", count=count))
        return [Event.from_stream(sid, f) for sid, f in rows]

    async def events_since(self, fx_id: str, since: str, limit: int = 2000) -> list[Event]:
        """Events logged at or after an ISO UTC time, oldest first; reads back from the end
        of the stream in pages and stops at the first older event (cost ~ the window)."""
        key, end, out = fx_prefix(fx_id) + "log", "+", []
        while len(out) < limit:
            rows = await self._call(self.r.xrevrange(key, end, "-", count=100))
            for sid, f in rows:
                if f["at"] < since:  # ISO UTC strings order like the times they name
                    return [Event.from_stream(s, g) for s, g in reversed(out)]
                out.append((sid, f))
            if len(rows) < 100:
                break
            end = "(" + rows[-1][0]
        return [Event.from_stream(s, g) for s, g in reversed(out)]

    async def open_ids(self, fx_id: str, limit: int = 50) -> list[str]:
        """Ids of open incidents, most severe then oldest first."""
        ns = await self._call(self.r.zrange(fx_prefix(fx_id) + "open", 0, limit - 1))
        return [f"INC-{n}" for n in ns]

    # ---------------------------------------------------------------- people
    async def member(self, who: str) -> dict[str, str] | None:
        """A member who joined by invite, or None."""
        raw = await self._call(self.r.hget(OPS + "members", who))
        return json.loads(raw) if raw else None

    async def create_invite(self, code: str, role: str, by: str, ttl: int) -> None:
        """Store a one-time invite code for a role, expiring after ttl seconds."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(OPS + f"invite:{code}", mapping={"role": role, "by": by})
        pipe.expire(OPS + f"invite:{code}", ttl)
        await self._call(pipe.execute())

    async def redeem_invite(self, code: str, who: str, name: str, at: str) -> str | None:
        """Use an invite once, atomically: the role it grants, or None if unknown/used/expired."""
        # Placeholders must stay raw \x01 bytes (json.dumps would escape them).
        rest = json.dumps({"name": name, "joined_at": at})[1:]
        record = '{"role":"\x01role\x01","invited_by":"\x01by\x01",' + rest
        ops = [
            ["require_exists", f"invite:{code}", "unknown"],
            ["hget", f"invite:{code}", "role", "role"],
            ["hget", f"invite:{code}", "by", "by"],
            ["hset", "members", who, record],
            ["del", f"invite:{code}"],
        ]
        try:
            applied = await self.apply(OPS, ops)
        except Refused:
            return None
        return applied.vars["role"]

    async def audit(self, who: str, action: str, detail: str, at: str) -> None:
        """Append to the audit trail (refusals, restricted reads, admin changes)."""
        await self._call(self.r.xadd(OPS + "audit", {"at": at, "who": who, "action": action,
                                                     "detail": detail},
                                     maxlen=100_000, approximate=True))

    async def audit_log(self, count: int = 100) -> list[dict[str, str]]:
        """Newest audit entries, newest first."""
        rows = await self._call(self.r.xrevrange(OPS + "audit", count=count))
        return [f for _, f in rows]

    # ---------------------------------------------------------------- live messages
    @staticmethod
    def _ref_key(fixture: str, platform: str, chat: str, ref: str) -> str:
        return f"{fx_prefix(fixture) if fixture else OPS}msg:{platform}:{chat}:{ref}"

    async def message_ref(self, fixture: str, platform: str, chat: str, ref: str) -> str | None:
        """The platform message id of a live message (e.g. an incident card) in a chat."""
        return await self._call(self.r.get(self._ref_key(fixture, platform, chat, ref)))

    async def set_message_ref(self, fixture: str, platform: str, chat: str, ref: str,
                              message_id: str) -> None:
        """Remember where a live message was posted, so later changes edit it in place."""
        pipe = self.r.pipeline(transaction=True)
        pipe.set(self._ref_key(fixture, platform, chat, ref), message_id, ex=14 * 86400)
        pipe.set(f"{OPS}msgof:{platform}:{chat}:{message_id}", f"{fixture}|{ref}", ex=14 * 86400)
        await self._call(pipe.execute())

    async def ref_of_message(self, platform: str, chat: str,
                             message_id: str) -> tuple[str, str] | None:
        """(fixture, ref) of a live message the bot posted, e.g. to attach a reply's photo."""
        raw = await self._call(self.r.get(f"{OPS}msgof:{platform}:{chat}:{message_id}"))
        if not raw:
            return None
        fixture, _, ref = raw.partition("|")
        return fixture, ref

    # ---------------------------------------------------------------- forms
    async def form(self, fx_id: str, who: str) -> dict[str, Any] | None:
        """A person's guided form in progress, or None if none or expired."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}form:{who}"))
        return json.loads(raw) if raw else None

    async def save_form(self, fx_id: str, who: str, state: dict[str, Any], ttl: int) -> None:
        """Keep a form's state for ttl seconds (any replica can continue it)."""
        await self._call(self.r.set(f"{fx_prefix(fx_id)}form:{who}", json.dumps(state), ex=ttl))

    async def drop_form(self, fx_id: str, who: str) -> None:
        """Forget a form."""
        await self._call(self.r.delete(f"{fx_prefix(fx_id)}form:{who}"))
