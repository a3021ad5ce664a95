"""Resolving a typed word against a vocabulary, with "did you mean …?" on a near miss; and
a command's key=value fields."""

from __future__ import annotations

import re

from bot.core.dispatch import UsageError
from bot.domain.plurals import plural
from bot.domain.vocab import Vocabulary, norm

# typed answers to a guided form's step, as well as its buttons
CANCEL_WORDS = {"cancel", "stop", "abort", "quit"}
BACK_WORDS = {"back", "previous", "prev"}
CONFIRM_WORDS = {"yes", "y", "confirm", "confirmed", "declare"}


def typed_word(text: str) -> str:
    """A typed answer as the word sets above hold it ("Yes." -> "yes")."""
    return text.strip().lower().strip(" .!")


def resolve_word(vocab: Vocabulary, word: str, what: str, otherwise: str = "", *,
                 field: str = "", listed: bool = False) -> str:
    """The key a word names, or a one-line UsageError (about `field`) suggesting the closest
    (and, `listed`, naming every key)."""
    key = vocab.resolve(word)
    if key:
        return key
    hints = vocab.suggest(word)
    hint = f" Did you mean {hints[0]}?" if hints else (f" {otherwise}" if otherwise else "")
    every = f" {choices(vocab)}." if listed else ""
    raise UsageError(f"Unknown {what} '{word[:40]}'.{hint}{every}", field=field)


def choices(vocab: Vocabulary) -> str:
    """'Offences: violent_disorder, public_disorder, …' (the keys people can type)."""
    return f"{plural(vocab.name).capitalize()}: {', '.join(vocab.keys())}"


LONGEST_KEY = 6  # words in the longest label or key ("possession of an offensive weapon")


def leading_key(vocab: Vocabulary, words: list[str]) -> tuple[str | None, int]:
    """The key the first words name, the longest run first ("pitch incursion" is one
    offence, not "pitch" and a stray word), and how many words it took; (None, 0)."""
    for n in range(min(len(words), LONGEST_KEY), 0, -1):
        key = vocab.resolve(" ".join(words[:n]))
        if key:
            return key, n
    return None, 0


KEY = re.compile(r"(?:^|\s)([A-Za-z]+)=")  # a key=, its value running to the next one
KEY_WITH_DIGITS = re.compile(r"(?:^|\s)([A-Za-z0-9]+)=")  # METHANE's e2= and the like


def key_values(rest: str, aliases: dict[str, str], what: str,
               keys: re.Pattern[str] = KEY) -> tuple[str, dict[str, str]]:
    """(text before the first key=, {field: value}) from key=value pairs whose values run to
    the next key=; a key not in `aliases` is a UsageError naming the `what` field."""
    parts = keys.split(" " + rest)
    out: dict[str, str] = {}
    for key, value in zip(parts[1::2], parts[2::2], strict=True):
        k = aliases.get(norm(key))
        if k is None:
            raise UsageError(f"Unknown {what} field '{key}='.")
        out[k] = unquoted(value)
    return parts[0], out


QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}  # phones type curly ones


def unquoted(value: str) -> str:
    """A value without the matched quotes around it (d="Open Gate F" -> Open Gate F)."""
    v = value.strip()
    if len(v) >= 2 and QUOTES.get(v[0]) == v[-1]:
        return v[1:-1].strip()
    return v
