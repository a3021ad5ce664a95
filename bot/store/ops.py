"""Typed ops of the write script (apply.lua): one small class per op it understands.

Store methods build a command's writes from these; `encode()` turns them into the script's
JSON. This module is the only place that knows how a `Var` travels to the script: as a JSON
object (`{"v": name}`, `{"t": [parts]}`, `{"q": value}` for a JSON-quoted value), never as
bytes inside a string, so nothing a user types can be read as a placeholder.

Adding an op: a dataclass here with `op` and its fields in the script's argument order, and
a branch in apply.lua.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from bot.domain.ledger import Event, Tpl, Var, clean_text, incident_of

Value = str | int | Var | Tpl


def enc(value: Any) -> Any:
    """The script's form of one argument."""
    if isinstance(value, Var):
        return {"v": value.name}
    if isinstance(value, Tpl):
        return {"t": [enc(p) for p in value.parts]}
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


def json_value(obj: Any) -> Value:
    """obj as JSON text, with any Vars in it filled in (JSON-quoted) by the script."""
    parts: list[Any] = []
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


class Op:
    """One step of a write; `wire()` is its list form for apply.lua."""

    op: ClassVar[str]

    def wire(self) -> list[Any]:
        """[op name, *arguments] as the script reads them."""
        return [self.op, *(_arg(getattr(self, f.name)) for f in fields(self))]  # type: ignore[arg-type]


def _arg(value: Any) -> Any:
    if isinstance(value, _Raw):
        return value.wire
    return enc(value)


def _flat(values: dict[Any, Any]) -> list[Any]:
    out: list[Any] = []
    for k, v in values.items():
        out += [_arg(k), _arg(v if not isinstance(v, int) else str(v))]
    return out


@dataclass
class RequireExists(Op):
    """Refuse the whole write unless the key exists."""

    op: ClassVar[str] = "require_exists"
    key: Value
    refusal: Value


@dataclass
class RequireMissing(Op):
    """Refuse the whole write if the key exists."""

    op: ClassVar[str] = "require_missing"
    key: Value
    refusal: Value


@dataclass
class RequireIn(Op):
    """Refuse unless a hash field is one of `allowed` (the refusal may use Var("current"))."""

    op: ClassVar[str] = "require_in"
    key: Value
    field: str
    allowed: list[str]
    refusal: Value


@dataclass
class Hget(Op):
    """Read a hash field into a Var (default when missing)."""

    op: ClassVar[str] = "hget"
    key: Value
    field: str
    var: str
    default: str = ""


@dataclass
class Get(Op):
    """Read a string key into a Var."""

    op: ClassVar[str] = "get"
    key: Value
    var: str
    default: str = ""


@dataclass
class Incr(Op):
    """INCR a counter key and keep the new value in a Var."""

    op: ClassVar[str] = "incr"
    key: Value
    var: str


@dataclass
class Hset(Op):
    """HSET several fields."""

    op: ClassVar[str] = "hset"
    key: Value
    values: dict[Any, Any]

    def wire(self) -> list[Any]:
        """[hset, key, field, value, ...]."""
        return [self.op, _arg(self.key), *_flat(self.values)]


@dataclass
class Hsetnx(Op):
    """HSETNX one field."""

    op: ClassVar[str] = "hsetnx"
    key: Value
    field: Value
    value: Value


@dataclass
class Hincrby(Op):
    """HINCRBY one field."""

    op: ClassVar[str] = "hincrby"
    key: Value
    field: Value
    by: int


@dataclass
class Set(Op):
    """SET a string key, with a TTL in seconds when ttl > 0."""

    op: ClassVar[str] = "set"
    key: Value
    value: Value
    ttl: int = 0


@dataclass
class Del(Op):
    """DEL a key."""

    op: ClassVar[str] = "del"
    key: Value


@dataclass
class Zadd(Op):
    """ZADD one member."""

    op: ClassVar[str] = "zadd"
    key: Value
    score: int
    member: Value


@dataclass
class ZaddScoreFrom(Op):
    """ZADD with score = base + a hash field's value (a severity band plus reported time)."""

    op: ClassVar[str] = "zadd_score_from"
    key: Value
    source: Value
    field: str
    base: int
    member: Value


@dataclass
class ZremByField(Op):
    """ZREM from the key named by a prefix plus a hash field (the incident's type index)."""

    op: ClassVar[str] = "zrem_by_field"
    prefix: str
    source: Value
    field: str
    member: Value


@dataclass
class Zrem(Op):
    """ZREM one member."""

    op: ClassVar[str] = "zrem"
    key: Value
    member: Value


@dataclass
class ZaddSince(Op):
    """ZADD NX member with score = now - a timestamp field (first time wins)."""

    op: ClassVar[str] = "zadd_since"
    key: Value
    source: Value
    field: str
    now: int
    member: Value


@dataclass
class HsetnxSince(Op):
    """Hash field = seconds since another timestamp field of the same hash (first wins)."""

    op: ClassVar[str] = "hsetnx_since"
    key: Value
    field: str
    since_field: str
    now: int


@dataclass
class Sadd(Op):
    """SADD one member."""

    op: ClassVar[str] = "sadd"
    key: Value
    member: Value


@dataclass
class Srem(Op):
    """SREM one member."""

    op: ClassVar[str] = "srem"
    key: Value
    member: Value


@dataclass
class Xadd(Op):
    """XADD an entry of field/values (the new stream id goes to Var("event"))."""

    op: ClassVar[str] = "xadd"
    key: Value
    values: dict[str, Any]

    def wire(self) -> list[Any]:
        """[xadd, key, field, value, ...]."""
        return [self.op, _arg(self.key), *_flat(self.values)]


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


@dataclass
class Rpush(Op):
    """RPUSH one value."""

    op: ClassVar[str] = "rpush"
    key: Value
    value: Value


@dataclass
class FindSimilar(Op):
    """The open incident of this type in a `near` zone reported since `since`, same zone
    first, newest 50 only; its number goes to Var(var) ('' when none)."""

    op: ClassVar[str] = "find_similar"
    index: str
    since: int
    type: str
    near: list[str]
    affiliation: str
    zone: str
    var: str


@dataclass
class ReturnHash(Op):
    """Return a hash's fields (after the writes) with the result."""

    op: ClassVar[str] = "return_hash"
    key: Value


@dataclass
class When(Op):
    """Run `ops` only when Var(var) is set."""

    op: ClassVar[str] = "skip_unless"
    var: str
    ops: list[Op] = field(default_factory=list)

    def wire(self) -> list[Any]:  # flattened by encode()
        """Not used: encode() flattens branches."""
        raise NotImplementedError


@dataclass
class Unless(When):
    """Run `ops` only when Var(var) is not set."""

    op: ClassVar[str] = "skip_if"


def flatten(ops: list[Op]) -> list[list[Any]]:
    """Wire lists of ops, branches turned into the script's skip counts."""
    out: list[list[Any]] = []
    for o in ops:
        if isinstance(o, When):
            inner = flatten(o.ops)
            out.append([o.op, o.var, len(inner)])
            out += inner
        else:
            out.append(o.wire())
    return out


def encode(ops: list[Op]) -> str:
    """The script's ARGV: ops as JSON. The core cleans what users type at the edge; this is
    the net for anything else (lone surrogates cannot be sent as UTF-8)."""
    text = json.dumps(flatten(ops), ensure_ascii=False, separators=(",", ":"))
    return clean_text(text)
