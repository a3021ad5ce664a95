"""Unicode bidirectional controls in user text: kept verbatim in the log, dropped from chat
cards, where one could reorder a line visually ("5S taerht bmob")."""

from __future__ import annotations

# embeddings and overrides (U+202A-E), isolates (U+2066-9), marks (LRM, RLM, ALM)
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_DROP = str.maketrans("", "", BIDI_CONTROLS)


def without_bidi_controls(text: str) -> str:
    """The text with every bidirectional control removed."""
    return text.translate(_DROP)
