"""Counts in words: "1 entry", "3 entries", "2 stewards" (one rule for every reply)."""

from __future__ import annotations

IRREGULAR = {"person": "people", "child": "children"}


def plural(word: str) -> str:
    """The plural of an English noun as the bot's replies use them (entry -> entries)."""
    head, _, last = word.rpartition(" ")
    if last in IRREGULAR:
        many = IRREGULAR[last]
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "o", "u", ""):
        many = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        many = last + "es"
    else:
        many = last + "s"
    return f"{head} {many}" if head else many


def noun(n: int, word: str, many: str = "") -> str:
    """The word for n of them: 'entry' for 1, else 'entries' (`many` where the rule is
    wrong)."""
    return word if n == 1 else (many or plural(word))


def counted(n: int, word: str, many: str = "") -> str:
    """'1 entry', '0 entries', '3 entries'."""
    return f"{n} {noun(n, word, many)}"
