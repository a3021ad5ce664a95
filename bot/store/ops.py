"""Typed ops of the write script (apply.lua): one small class per op it understands.

Store methods build a command's writes from these; `encode()` turns them into the script's
MessagePack. This module is the only place that knows how a `Var` travels to the script: as a JSON
map (`{"v": name}`, `{"t": [parts]}`, `{"q": value}` for a JSON-quoted value), never as
bytes inside a string, so nothing a user types can be read as a placeholder.

Adding an op: a class here whose constructor takes the op's arguments in the script's order
and builds (op name, *arguments) with Vars encoded, added to `Op`, and a branch in
apply.lua. (Ops are tuples so msgpack and json write them without a per-op conversion: one report is
some thirty ops, and this is the hot path.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgpack

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
    if kind is _Raw:
        return value.wire
    return value


def _json_parts(obj: Any, out: list[Any]) -> None:
    kind = type(obj)
    if kind is Var or kind is Tpl:
        out.append({"q": enc(obj)})  # the script JSON-quotes the filled-in text
    elif isinstance(obj, dict):
        out.append("{")
        for i, (k, v) in enumerate(obj.items()):
            out.append(("," if i else "") + _dumps(str(k)) + ":")
            _json_child(v, out)
        out.append("}")
    elif isinstance(obj, list | tuple):
        out.append("[")
        for i, v in enumerate(obj):
            if i:
                out.append(",")
            _json_child(v, out)
        out.append("]")
    else:
        out.append(_dumps(obj))


def _json_child(obj: Any, out: list[Any]) -> None:
    kind = type(obj)
    if kind is dict or kind is list or kind is tuple:
        try:  # most of a tree holds no Var: written at C speed, as the walk would write it
            out.append(_dumps(obj))
            return
        except TypeError:
            pass
    _json_parts(obj, out)


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


class _Wire(tuple):
    """An op in the script's form: (op name, *arguments), Vars already encoded; json writes
    it as a list as it is."""

    __slots__ = ()


def _pairs(values: dict[Any, Any]) -> list[Any]:
    out: list[Any] = []
    for k, v in values.items():
        out.append(k if type(k) is str else enc(k))
        out.append(v if type(v) is str or type(v) is int else enc(v))
    return out


class RequireExists(_Wire):
    """Refuse the whole write unless the key exists."""

    __slots__ = ()

    def __new__(cls, key: Value, refusal: Value) -> RequireExists:
        return tuple.__new__(cls, ("require_exists", enc(key), enc(refusal)))


class RequireMissing(_Wire):
    """Refuse the whole write if the key exists."""

    __slots__ = ()

    def __new__(cls, key: Value, refusal: Value) -> RequireMissing:
        return tuple.__new__(cls, ("require_missing", enc(key), enc(refusal)))


class RequireIn(_Wire):
    """Refuse unless a hash field is one of `allowed` (the refusal may use Var("current"))."""

    __slots__ = ()

    def __new__(cls, key: Value, field: str, allowed: list[str], refusal: Value) -> RequireIn:
        return tuple.__new__(cls, ("require_in", enc(key), field, allowed, enc(refusal)))


class Hget(_Wire):
    """Read a hash field into a Var (default when missing)."""

    __slots__ = ()

    def __new__(cls, key: Value, field: str, var: str, default: str = "") -> Hget:
        return tuple.__new__(cls, ("hget", enc(key), field, var, default))


class Get(_Wire):
    """Read a string key into a Var."""

    __slots__ = ()

    def __new__(cls, key: Value, var: str, default: str = "") -> Get:
        return tuple.__new__(cls, ("get", enc(key), var, default))


class Incr(_Wire):
    """INCR a counter key and keep the new value in a Var."""

    __slots__ = ()

    def __new__(cls, key: Value, var: str) -> Incr:
        return tuple.__new__(cls, ("incr", enc(key), var))


class Hset(_Wire):
    """HSET several fields."""

    __slots__ = ()

    def __new__(cls, key: Value, values: dict[Any, Any]) -> Hset:
        return tuple.__new__(cls, ("hset", enc(key), *_pairs(values)))


class Hsetnx(_Wire):
    """HSETNX one field."""

    __slots__ = ()

    def __new__(cls, key: Value, field: Value, value: Value) -> Hsetnx:
        return tuple.__new__(cls, ("hsetnx", enc(key), enc(field), enc(value)))


class Hincrby(_Wire):
    """HINCRBY one field."""

    __slots__ = ()

    def __new__(cls, key: Value, field: Value, by: int) -> Hincrby:
        return tuple.__new__(cls, ("hincrby", enc(key), enc(field), by))


class HincrbyMany(_Wire):
    """HINCRBY several fields of one hash ({field: by}); one op for a write's counters."""

    __slots__ = ()

    def __new__(cls, key: Value, values: dict[Any, int]) -> HincrbyMany:
        return tuple.__new__(cls, ("hincrby_many", enc(key), *_pairs(values)))


class Set(_Wire):
    """SET a string key, with a TTL in seconds when ttl > 0."""

    __slots__ = ()

    def __new__(cls, key: Value, value: Value, ttl: int = 0) -> Set:
        return tuple.__new__(cls, ("set", enc(key), enc(value), ttl))


class Del(_Wire):
    """DEL a key."""

    __slots__ = ()

    def __new__(cls, key: Value) -> Del:
        return tuple.__new__(cls, ("del", enc(key)))


class Zadd(_Wire):
    """ZADD one member."""

    __slots__ = ()

    def __new__(cls, key: Value, score: int, member: Value) -> Zadd:
        return tuple.__new__(cls, ("zadd", enc(key), score, enc(member)))


class ZaddScoreFrom(_Wire):
    """ZADD with score = base + a hash field's value (a severity band plus reported time)."""

    __slots__ = ()

    def __new__(cls, key: Value, source: Value, field: str, base: int,
                member: Value) -> ZaddScoreFrom:
        return tuple.__new__(cls, ("zadd_score_from", enc(key), enc(source), field, base,
                                   enc(member)))


class ZremByField(_Wire):
    """ZREM from the key named by a prefix plus a hash field (the incident's type index)."""

    __slots__ = ()

    def __new__(cls, prefix: str, source: Value, field: str, member: Value) -> ZremByField:
        return tuple.__new__(cls, ("zrem_by_field", prefix, enc(source), field, enc(member)))


class Zrem(_Wire):
    """ZREM one member."""

    __slots__ = ()

    def __new__(cls, key: Value, member: Value) -> Zrem:
        return tuple.__new__(cls, ("zrem", enc(key), enc(member)))


class ZaddSince(_Wire):
    """ZADD NX member with score = now - a timestamp field (first time wins)."""

    __slots__ = ()

    def __new__(cls, key: Value, source: Value, field: str, now: int, member: Value) -> ZaddSince:
        return tuple.__new__(cls, ("zadd_since", enc(key), enc(source), field, now, enc(member)))


class HsetnxSince(_Wire):
    """Hash field = seconds since another timestamp field of the same hash (first wins)."""

    __slots__ = ()

    def __new__(cls, key: Value, field: str, since_field: str, now: int) -> HsetnxSince:
        return tuple.__new__(cls, ("hsetnx_since", enc(key), field, since_field, now))


class Sadd(_Wire):
    """SADD one member."""

    __slots__ = ()

    def __new__(cls, key: Value, member: Value) -> Sadd:
        return tuple.__new__(cls, ("sadd", enc(key), enc(member)))


class Srem(_Wire):
    """SREM one member."""

    __slots__ = ()

    def __new__(cls, key: Value, member: Value) -> Srem:
        return tuple.__new__(cls, ("srem", enc(key), enc(member)))


class Xadd(_Wire):
    """XADD an entry of field/values (the new stream id goes to Var("event"))."""

    __slots__ = ()

    def __new__(cls, key: Value, values: dict[str, Any]) -> Xadd:
        return tuple.__new__(cls, ("xadd", enc(key), *_pairs(values)))


class Rpush(_Wire):
    """RPUSH one value."""

    __slots__ = ()

    def __new__(cls, key: Value, value: Value) -> Rpush:
        return tuple.__new__(cls, ("rpush", enc(key), enc(value)))


class FindSimilar(_Wire):
    """The open incident of this type in a `near` zone reported since `since`, same zone
    first, newest 50 only; its number goes to Var(var) ('' when none)."""

    __slots__ = ()

    def __new__(cls, index: str, since: int, type: str, near: list[str], affiliation: str,
                zone: str, var: str) -> FindSimilar:
        return tuple.__new__(cls, ("find_similar", index, since, type, near, affiliation,
                                   zone, var))


class ReturnHash(_Wire):
    """Return a hash's fields (after the writes) with the result."""

    __slots__ = ()

    def __new__(cls, key: Value) -> ReturnHash:
        return tuple.__new__(cls, ("return_hash", enc(key)))


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


RESTRICTED_LOG = "rlog"


def log_restricted(ev: Event | None) -> list[Op]:
    """Append an event to the fixture's restricted log (none when ev is None)."""
    if ev is None:
        return []
    return [Xadd(RESTRICTED_LOG, {"kind": ev.kind, "at": ev.at, "by": ev.by, "role": ev.role,
                                  "phase": ev.phase, "data": json_value(ev.data)})]


class When(NamedTuple):
    """Run `ops` only when Var(var) is set."""

    var: str
    ops: list[Op]
    op = "skip_unless"
    run = "run_if"


class WhenCmp(NamedTuple):
    """Run `ops` only when Var(var) compares so with `value`: "<" as numbers, "==" as text
    (e.g. raise a severity only when the new one is higher)."""

    var: str
    cmp: str
    value: str | int
    ops: list[Op]
    op = "skip_unless_cmp"
    run = "run_if_cmp"


class Unless(NamedTuple):
    """Run `ops` only when Var(var) is not set."""

    var: str
    ops: list[Op]
    op = "skip_if"
    run = "run_unless"


class Outbox(_Wire):
    """XADD a message (JSON, Vars filled in by the script) to a fixture's outbox stream:
    what the write makes someone see, durable with the write."""

    __slots__ = ()

    def __new__(cls, stream: Value, message: Value) -> Outbox:
        return tuple.__new__(cls, ("outbox", enc(stream), enc(message)))


Op = (RequireExists | RequireMissing | RequireIn | Hget | Get | Incr | Hset | Hsetnx | Hincrby
      | HincrbyMany | Set | Del | Zadd | ZaddScoreFrom | ZremByField | Zrem | ZaddSince
      | HsetnxSince | Sadd | Srem | Xadd | Rpush | FindSimilar | ReturnHash | When | Unless
      | WhenCmp | Outbox)


def flatten(ops: list[Op]) -> list[Any]:
    """The ops in the script's form, branches turned into its skip counts."""
    out: list[Any] = []
    for o in ops:
        if type(o) is When or type(o) is Unless:
            inner = flatten(o.ops)  # type: ignore[union-attr]
            out.append((o.op, o.var, len(inner)))  # type: ignore[union-attr]
            out += inner
        elif type(o) is WhenCmp:
            inner = flatten(o.ops)  # type: ignore[union-attr]
            out.append((o.op, o.var, o.cmp, o.value, len(inner)))  # type: ignore[union-attr]
            out += inner
        else:
            out.append(o)
    return out


# UTF-8 straight out (no \u escapes to re-expand), no circular check (ops are trees).
_WIRE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
# MessagePack: strings go length-prefixed, so the JSON inside event data and outbox entries
# is neither escaped here nor unescaped by the script (about a third of Python's encoding and
# a sixth of the script's decoding, measured in bench/write_path.py).
# Raw strings only (no bin type): a packed branch travels inside as a string.
_PACK = msgpack.Packer(use_bin_type=False, autoreset=True)


def encode(ops: list[Op]) -> bytes:
    """The script's ARGV: ops as MessagePack, each branch (When, Unless, WhenCmp) packed on
    its own so the script decodes it only when it is taken (apply.lua also takes the flat
    JSON of `encode_json`). The core cleans what users type at the edge; this is the net for
    anything else (lone surrogates cannot be sent as UTF-8: they become U+FFFD)."""
    try:
        return _PACK.pack(_nest(ops))
    except UnicodeEncodeError:
        return encode_json(ops)


def _nest(ops: list[Op]) -> list[Any]:
    out: list[Any] = []
    for o in ops:
        kind = type(o)
        if kind is When or kind is Unless:
            out.append((o.run, o.var, _PACK.pack(_nest(o.ops))))  # type: ignore[union-attr]
        elif kind is WhenCmp:
            out.append((o.run, o.var, o.cmp, o.value,  # type: ignore[union-attr]
                        _PACK.pack(_nest(o.ops))))  # type: ignore[union-attr]
        else:
            out.append(o)
    return out


def encode_json(ops: list[Op]) -> bytes:
    """The ops as flat JSON (branches as skip counts), UTF-8 encoded once here; lone
    surrogates become U+FFFD."""
    text = _WIRE.encode(flatten(ops))
    try:
        return text.encode()
    except UnicodeEncodeError:
        return clean_text(text).encode()
