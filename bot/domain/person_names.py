"""Names in a description of a missing person: the alert goes to every steward, so a name
("a boy called Tommy Smith", "her name is Lily Jones") is found and refused before it goes
(DOMAIN.md: no names of the people we look for or deal with go out or into the store)."""

from __future__ import annotations

import re

# "her name is Lily", "name: lily": whatever follows is a name
_NAME_IS = re.compile(r"\b(?:(?:his|her|their|the\s+child's|child's)\s+name|name)"
                      r"(?:\s+is|\s*:|'s)\s+\S+(?:\s+[^\s,.;]+)?", re.IGNORECASE)
# "called Tommy Smith", "known as Tom": a capitalised word after the verb is a name
# ("called for help" is not)
_CALLED = re.compile(r"\b(?i:called|named|known\s+as|goes\s+by|answers\s+to)\s+"
                     r"[A-Z][^\s,.;]*(?:\s+[A-Z][^\s,.;]*)?")


def name_in(text: str) -> str | None:
    """The phrase giving a person's name in a description ('called Tommy Smith'), or None."""
    m = _NAME_IS.search(text) or _CALLED.search(text)
    return m.group(0) if m else None
