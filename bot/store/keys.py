"""The keys a write script touches, derived from its ops, so apply.lua declares them all.

Redis Cluster routes a script, and checks a migrating slot, by its declared KEYS only; a
script that reads or writes keys it did not declare can run on the wrong copy of a slot
mid-migration (the issue saw INC-1…3 logged twice). apply.lua refuses any key not declared
here, so this table is the one place to extend when an op is added to apply.lua.
"""

from __future__ import annotations

from typing import Any

from bot.store.ops import flatten

# op -> positions (in the op list) of the keys it names, relative to the script's prefix.
# An op not listed names its key at position 1 (the common case); ops with no key map to ().
KEY_ARGS: dict[str, tuple[int, ...]] = {
    "zadd_score_from": (1, 2),
    "zrem_by_field": (2,),
    "zadd_since": (1, 2),
    "skip_if": (),
    "skip_unless": (),
    "skip_unless_cmp": (),
}
# op -> families of keys the script finds by itself (a name read from a hash or an index);
# declared as "<family>*", the name before "*" taken from the op (int) or fixed (str).
KEY_FAMILIES: dict[str, tuple[int | str, ...]] = {
    "zrem_by_field": (1,),  # the type index named by a hash field: open:t:<type>
    "find_similar": ("inc:",),  # the candidate incidents from the index
}


def key_shape(value: Any) -> str:
    """A key as declared: literal text, with each value the script fills in written as
    `$name` (apply.lua writes the same shape), so a key like inc:$n is declared before the
    number exists. Same hash tag, so the same slot."""
    if type(value) is str:
        return value
    if isinstance(value, dict):
        if "v" in value:
            return "$" + str(value["v"])
        if "t" in value:
            return "".join(key_shape(part) for part in value["t"])
    return str(value)


_ONE = (1,)


def script_keys(prefix: str, ops: list[Any], dedupe: str = "", *,
                flat: bool = False) -> list[str]:
    """KEYS for apply.lua: the prefix first, then every key the ops touch (once each).
    `flat`: the ops are already flattened (the store flattens once for keys and payload)."""
    out: dict[str, None] = {prefix: None}
    if dedupe:
        out[f"{prefix}dedupe:{dedupe}"] = None
    args, families = KEY_ARGS.get, KEY_FAMILIES.get
    for op in (ops if flat else flatten(ops)):
        name = op[0]
        for i in args(name, _ONE):
            v = op[i]
            out[prefix + (v if type(v) is str else key_shape(v))] = None
        for fam in families(name, ()):
            out[prefix + (fam if isinstance(fam, str) else key_shape(op[fam])) + "*"] = None
    return list(out)
