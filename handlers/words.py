"""Resolving a typed word against a vocabulary, with "did you mean …?" on a near miss."""

from __future__ import annotations

from bot.core.dispatch import UsageError
from bot.domain.vocab import Vocabulary


def resolve_word(vocab: Vocabulary, word: str, what: str, otherwise: str = "", *,
                 field: str = "") -> str:
    """The key a word names, or a one-line UsageError (about `field`) suggesting the closest."""
    key = vocab.resolve(word)
    if key:
        return key
    hints = vocab.suggest(word)
    hint = f" Did you mean {hints[0]}?" if hints else (f" {otherwise}" if otherwise else "")
    raise UsageError(f"Unknown {what} '{word}'.{hint}", field=field)
