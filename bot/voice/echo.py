"""Prompt echo: in noise Whisper writes words of its prompt (the ground's vocabulary) that
nobody said ("Stratford Gate C"). The prompt is kept (without it the word error rate
doubles); a segment is dropped instead when the model was unsure of it or when it recites
the prompt."""

from __future__ import annotations

import re
from dataclasses import dataclass

UNSURE = -1.2  # average log-probability under which a segment is a guess: measured with base,
# real speech scores -0.05 to -0.35 clean or at 10 dB, the espeak corpus down to -1.0 at 10 dB,
# and a recited prompt over crowd noise ("Stratford stations, flight, departure…") -1.77
DOUBTFUL = -0.5  # a segment this unsure that is mostly the prompt's words is an echo
RUN = 3  # words in the prompt's order that make a phrase of the prompt
RECITED = 7  # a run this long is the prompt recited, however sure the model is (a place
# name said in full, "Sir Trevor Brooking Stand north stand", is 6)
MOSTLY = 0.6


def words(text: str) -> list[str]:
    """Lower-case words, punctuation off (how segments and the prompt are compared)."""
    return re.findall(r"[a-z0-9']+", text.lower().replace("-", " "))


@dataclass(frozen=True)
class Prompt:
    """The prompt's phrases, for telling an echo from speech."""

    phrases: frozenset[tuple[str, ...]]  # every RUN words in a row
    recited: frozenset[tuple[str, ...]]  # every RECITED words in a row


def prompt_of(text: str) -> Prompt:
    """The phrases of a prompt, made once per worker."""
    ws = words(text)
    return Prompt(frozenset(tuple(ws[i:i + RUN]) for i in range(len(ws) - RUN + 1)),
                  frozenset(tuple(ws[i:i + RECITED]) for i in range(len(ws) - RECITED + 1)))


def is_echo(text: str, avg_logprob: float, prompt: Prompt) -> bool:
    """Whether a segment is to be dropped: a guess, the prompt recited, or mostly prompt
    phrases said without confidence."""
    if avg_logprob < UNSURE:
        return True
    ws = words(text)
    if any(tuple(ws[i:i + RECITED]) in prompt.recited for i in range(len(ws) - RECITED + 1)):
        return True
    covered: set[int] = set()
    for i in range(len(ws) - RUN + 1):
        if tuple(ws[i:i + RUN]) in prompt.phrases:
            covered.update(range(i, i + RUN))
    return bool(ws) and avg_logprob < DOUBTFUL and len(covered) >= MOSTLY * len(ws)
