"""Typed ops of the write script (apply.lua): one small class per op it understands.

Store methods build a command's writes from these; `encode()` turns them into the script's
JSON. This module is the only place that knows how a `Var` travels to the script: as a JSON
object (`{"v": name}`, `{"t": [parts]}`, `{"q": value}` for a JSON-quoted value), never as
bytes inside a string, so nothing a user types can be read as a placeholder.

Adding an op: a NamedTuple here with `op` and its fields in the script's argument order, added
to `Op`, and a branch in apply.lua.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from bot.domain.ledger import Event, Tpl, Var, clean_text, incident_of

Value = str | int | Var | Tpl


def enc(value: Any) -> Any:
    """The script's form of one argument (a Var's or Tpl's is cached on it)."""
    kind = type(value)
    if kind is Var:
        if value.wire is None:
            value.wire = {"v": value.name}
        return value.wire
    if kind is Tpl:
        if value.wire is None:
            value.wire = {"t": [p if type(p) is str else enc(p) for p in value.parts]}
        return value.wire
    return value


def _json_parts(obj: Any, out: list[Any]) -> None:
    if isinstance(obj, Var | Tpl):
        out.append({"q": enc(obj)})  # the script JSON-quotes the filled-in text
    elif isinstance(obj, dict):
        out.append("{")
        for i, (k, v) in enumerate(obj.items()):
            out.append(("," if i else "") + json.dumps(str(k), ensure_ascii=False) + ":")
            _json_parts(v, out)
        out.append("}")
    elif isinstance(obj, list | tuple):
        out.append("[")
        for i, v in enumerate(obj):
            if i:
                out.append(",")
            _json_parts(v, out)
        out.append("]")
    else:
        out.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dumps(obj: Any) -> str:
    return _JSON.encode(obj)


def json_value(obj: Any) -> Value:
    """obj as JSON text, with any Vars in it filled in (JSON-quoted) by the script."""
    if type(obj) is dict:  # fast path: Vars sit at the top level of event data
        plain = {k: v for k, v in obj.items() if type(v) is not Var and type(v) is not Tpl}
        if len(plain) == len(obj):
            try:
                return _dumps(obj)
            except TypeError:
                pass  # a Var deeper down: walk it
        else:
            try:
                head = _dumps(plain)[:-1]
            except TypeError:
                head = ""
            if head:
                parts: list[Any] = [head]
                for k, v in obj.items():
                    if k not in plain:
                        sep = "," if len(parts) > 1 or head != "{" else ""
                        parts += [f"{sep}{_dumps(str(k))}:", {"q": enc(v)}]
                parts.append("}")
                return _Raw({"t": parts})
    parts = []
    _json_parts(obj, parts)
    merged: list[Any] = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        else:
            merged.append(p)
    if len(merged) == 1 and isinstance(merged[0], str):
        return merged[0]
    return _Raw({"t": merged})


@dataclass(frozen=True)
class _Raw:
    """An already-encoded template (from json_value)."""

    wire: dict[str, Any]


class RequireExists(NamedTuple):
    """Refuse the whole write unless the key exists."""

    op = "require_exists"
    key: Value
    refusal: Value


class RequireMissing(NamedTuple):
    """Refuse the whole write if the key exists."""

    op = "require_missing"
    key: Value
    refusal: Value


class RequireIn(NamedTuple):
    """Refuse unless a hash field is one of `allowed` (the refusal may use Var("current"))."""

    op = "require_in"
    key: Value
    field: str
    allowed: list[str]
    refusal: Value


class Hget(NamedTuple):
    """Read a hash field into a Var (default when missing)."""

    op = "hget"
    key: Value
    field: str
    var: str
    default: str = ""


class Get(NamedTuple):
    """Read a string key into a Var."""

    op = "get"
    key: Value
    var: str
    default: str = ""


class Incr(NamedTuple):
    """INCR a counter key and keep the new value in a Var."""

    op = "incr"
    key: Value
    var: str


class Hset(NamedTuple):
    """HSET several fields."""

    op = "hset"
    key: Value
    values: dict[Any, Any]


class Hsetnx(NamedTuple):
    """HSETNX one field."""

    op = "hsetnx"
    key: Value
    field: Value
    value: Value


class Hincrby(NamedTuple):
    """HINCRBY one field."""

    op = "hincrby"
    key: Value
    field: Value
    by: int


class HincrbyMany(NamedTuple):
    """HINCRBY several fields of one hash ({field: by}); one op for a write's counters."""

    op = "hincrby_many"
    key: Value
    values: dict[Any, int]


class Set(NamedTuple):
    """SET a string key, with a TTL in seconds when ttl > 0."""

    op = "set"
    key: Value
    value: Value
    ttl: int = 0


class Del(NamedTuple):
    """DEL a key."""

    op = "del"
    key: Value


class Zadd(NamedTuple):
    """ZADD one member."""

    op = "zadd"
    key: Value
    score: int
    member: Value


class ZaddScoreFrom(NamedTuple):
    """ZADD with score = base + a hash field's value (a severity band plus reported time)."""

    op = "zadd_score_from"
    key: Value
    source: Value
    field: str
    base: int
    member: Value


class ZremByField(NamedTuple):
    """ZREM from the key named by a prefix plus a hash field (the incident's type index)."""

    op = "zrem_by_field"
    prefix: str
    source: Value
    field: str
    member: Value


class Zrem(NamedTuple):
    """ZREM one member."""

    op = "zrem"
    key: Value
    member: Value


class ZaddSince(NamedTuple):
    """ZADD NX member with score = now - a timestamp field (first time wins)."""

    op = "zadd_since"
    key: Value
    source: Value
    field: str
    now: int
    member: Value


class HsetnxSince(NamedTuple):
    """Hash field = seconds since another timestamp field of the same hash (first wins)."""

    op = "hsetnx_since"
    key: Value
    field: str
    since_field: str
    now: int


class Sadd(NamedTuple):
    """SADD one member."""

    op = "sadd"
    key: Value
    member: Value


class Srem(NamedTuple):
    """SREM one member."""

    op = "srem"
    key: Value
    member: Value


class Xadd(NamedTuple):
    """XADD an entry of field/values (the new stream id goes to Var("event"))."""

    op = "xadd"
    key: Value
    values: dict[str, Any]


def log_event(ev: Event) -> list[Op]:
    """Append an event to the fixture's stream (Vars in its data are filled in by the
    script) and, when it is about an incident, its stream id to that incident's timeline
    index ('tl:<n>'), so a timeline reads only its own events."""
    ops: list[Op] = [Xadd("log", {"kind": ev.kind, "at": ev.at, "by": ev.by, "role": ev.role,
                                  "phase": ev.phase, "data": json_value(ev.data)})]
    n = incident_of(ev)
    if n is not None:
        ops.append(Rpush("tl:" + n, Var("event")))
    return ops


class Rpush(NamedTuple):
    """RPUSH one value."""

    op = "rpush"
    key: Value
    value: Value


class FindSimilar(NamedTuple):
    """The open incident of this type in a `near` zone reported since `since`, same zone
    first, newest 50 only; its number goes to Var(var) ('' when none)."""

    op = "find_similar"
    index: str
    since: int
    type: str
    near: list[str]
    affiliation: str
    zone: str
    var: str


class ReturnHash(NamedTuple):
    """Return a hash's fields (after the writes) with the result."""

    op = "return_hash"
    key: Value


class When(NamedTuple):
    """Run `ops` only when Var(var) is set."""

    var: str
    ops: list[Op]
    op = "skip_unless"


class Unless(NamedTuple):
    """Run `ops` only when Var(var) is not set."""

    var: str
    ops: list[Op]
    op = "skip_if"


Op = (RequireExists | RequireMissing | RequireIn | Hget | Get | Incr | Hset | Hsetnx | Hincrby
      | HincrbyMany | Set | Del | Zadd | ZaddScoreFrom | ZremByField | Zrem | ZaddSince
      | HsetnxSince | Sadd | Srem | Xadd | Rpush | FindSimilar | ReturnHash | When | Unless)
_FIELD_VALUES = (Hset, Xadd, HincrbyMany)  # (key, {field: value}): key, field, value, ...
_BRANCHES = (When, Unless)


def flatten(ops: list[Op]) -> list[list[Any]]:
    """Wire lists of ops ([op name, *arguments]), branches turned into the script's skip
    counts. Vars stay objects here; encode() writes them (see _wire_default)."""
    out: list[list[Any]] = []
    for o in ops:
        kind = type(o)
        if kind in _BRANCHES:
            inner = flatten(o.ops)  # type: ignore[union-attr]
            out.append([o.op, o.var, len(inner)])  # type: ignore[union-attr]
            out += inner
        elif kind in _FIELD_VALUES:
            out.append([o.op, o.key, *[x for kv in o.values.items()  # type: ignore[union-attr]
                                       for x in kv]])
        else:
            out.append([o.op, *o])
    return out


def _wire_default(value: Any) -> Any:
    """How json.dumps writes what is not plain JSON: Vars, Tpls, prepared JSON templates."""
    kind = type(value)
    if kind is Var or kind is Tpl:
        return enc(value)
    if kind is _Raw:
        return value.wire
    raise TypeError(f"cannot send {type(value).__name__} to the write script")


_WIRE = json.JSONEncoder(separators=(",", ":"), default=_wire_default)  # ASCII out
_WIRE_UTF8 = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                              default=_wire_default)


def encode(ops: list[Op]) -> str:
    """The script's ARGV: ops as JSON. The core cleans what users type at the edge; this is
    the net for anything else (lone surrogates cannot be sent as UTF-8)."""
    flat = flatten(ops)
    text = _WIRE.encode(flat)
    if "\\ud" not in text:  # no UTF-16 surrogates escaped: plain ASCII the script reads
        return text
    # astral characters (valid pairs) or lone surrogates: send UTF-8, lone ones as U+FFFD
    return clean_text(_WIRE_UTF8.encode(flat))
