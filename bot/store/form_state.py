"""Guided forms in progress: each person's state by fixture, saved compare-and-set so two
taps on two replicas cannot both take a step, and the last finished form's number."""

from __future__ import annotations

import json
from typing import Any

from bot.domain.outcomes import Reason
from bot.store.base import Refused, fx_prefix, note_write
from bot.store.gateway import Gateway

# KEYS[1] form key; ARGV: expected version ("" = start afresh), new state JSON, TTL seconds.
FORM_CAS = """
if ARGV[1] ~= '' then
  local cur = redis.call('GET', KEYS[1])
  if not cur or tostring(cjson.decode(cur)['_v']) ~= ARGV[1] then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
return 1
"""


class Forms:
    """Guided forms (METHANE, HOT, decisions, police, missing person, voice notes) between
    their steps, over the gateway; the report that finishes one is the incident log's."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self._form_cas = gateway.script(FORM_CAS)

    async def form(self, fx_id: str, who: str) -> dict[str, Any] | None:
        """A person's guided form in progress, or None if none or expired."""
        raw = await self.gateway.call(lambda r: r.get(f"{fx_prefix(fx_id, self.space)}form:{who}"))
        return json.loads(raw) if raw else None

    async def save_form(self, fx_id: str, who: str, state: dict[str, Any], ttl: int) -> None:
        """Keep a form's state for ttl seconds (any replica can continue it).

        Compare-and-set: a state read with form() is saved only if nobody saved a step since
        (two taps on two replicas cannot both win); Refused otherwise. A new state (not read
        with form()) starts the form afresh."""
        note_write()
        expected = state.get("_v")
        state["_v"] = int(expected or 0) + 1
        ok = await self.gateway.run_script(
            self._form_cas, [f"{fx_prefix(fx_id, self.space)}form:{who}"],
            ["" if expected is None else str(expected), json.dumps(state), ttl])
        if not ok:
            state["_v"] = expected
            raise Refused(Reason.STEP_TAKEN)

    async def form_done(self, fx_id: str, who: str) -> tuple[str, int] | None:
        """(form id, incident number) of the person's last finished guided form, or None."""
        key = f"{fx_prefix(fx_id, self.space)}formdone:{who}"
        raw = await self.gateway.call(lambda r: r.get(key))
        fid, _, n = (raw or "").partition(" ")
        return (fid, int(n)) if n.isdigit() else None

    async def form_ttl(self, fx_id: str, who: str) -> int:
        """Seconds a form has left (negative when there is none)."""
        key = f"{fx_prefix(fx_id, self.space)}form:{who}"
        return int(await self.gateway.call(lambda r: r.ttl(key)))

    async def drop_form(self, fx_id: str, who: str) -> None:
        """Forget a form."""
        await self.gateway.call(lambda r: r.delete(f"{fx_prefix(fx_id, self.space)}form:{who}"))
