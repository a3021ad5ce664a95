"""Resolving a typed word against a vocabulary, with "did you mean …?" on a near miss; and
a command's key=value fields."""

from __future__ import annotations

import re

from bot.core.dispatch import UsageError
from bot.domain.vocab import Vocabulary

# typed answers to a guided form's step, as well as its buttons
CANCEL_WORDS = {"cancel", "stop", "abort", "quit"}
BACK_WORDS = {"back", "previous", "prev"}
CONFIRM_WORDS = {"yes", "y", "confirm", "confirmed", "declare"}


def typed_word(text: str) -> str:
    """A typed answer as the word sets above hold it ("Yes." -> "yes")."""
    return text.strip().lower().strip(" .!")


def resolve_word(vocab: Vocabulary, word: str, what: str, otherwise: str = "", *,
                 field: str = "") -> str:
    """The key a word names, or a one-line UsageError (about `field`) suggesting the closest."""
    key = vocab.resolve(word)
    if key:
        return key
    hints = vocab.suggest(word)
    hint = f" Did you mean {hints[0]}?" if hints else (f" {otherwise}" if otherwise else "")
    raise UsageError(f"Unknown {what} '{word}'.{hint}", field=field)


KEY = re.compile(r"(?:^|\s)([A-Za-z]+)=")  # a key=, its value running to the next one
KEY_WITH_DIGITS = re.compile(r"(?:^|\s)([A-Za-z0-9]+)=")  # METHANE's e2= and the like


def key_values(rest: str, aliases: dict[str, str], what: str,
               keys: re.Pattern[str] = KEY) -> tuple[str, dict[str, str]]:
    """(text before the first key=, {field: value}) from key=value pairs whose values run to
    the next key=; a key not in `aliases` is a UsageError naming the `what` field."""
    parts = keys.split(" " + rest)
    out: dict[str, str] = {}
    for key, value in zip(parts[1::2], parts[2::2], strict=True):
        k = aliases.get(key.lower())
        if k is None:
            raise UsageError(f"Unknown {what} field '{key}='.")
        out[k] = value.strip()
    return parts[0], out
