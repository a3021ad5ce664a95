"""Prompt echo: in noise Whisper writes words of its prompt (the ground's vocabulary) that
nobody said ("Stratford Gate C"). The prompt is kept (without it the word error rate
doubles); the echo is dropped word by word instead: only a run of the prompt's words that
recites the prompt, or that the model was unsure of in a segment it had to guess (one Whisper
would decode again at a higher temperature: repetitive, or unsure as a whole), goes; the
words around it stay, however
unsure the segment as a whole was. A segment written over silence (the model itself thought
there was no speech, and was unsure of what it wrote) is dropped whole."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LOW = 0.5  # a prompt run whose words the model gave this probability or less, on average,
# in a guessed segment, is an echo: measured with base, echoed place names score 0.0-0.3
# ("Stratford[0.12] station[0.00]"). Only in a guess: in a segment decoded at the first try,
# place names really said score as low (the espeak corpus, clean: "Pitch[0.07]
# perimeter[0.00]", "Gate[0.35] C[0.14] turnstiles[0.34]"), so there only a recital goes
UNSURE = -1.0  # an average log-probability under this makes a segment a guess (Whisper's
# own threshold for decoding again at a higher temperature) ...
REPETITIVE = 2.4  # ... and so does a text that gzip compresses more than this (Whisper's
# other threshold: "Stratford station" six times over a note in crowd noise)
RECITED = 7  # a run this long is the prompt recited, however sure the model is (a place
# name said in full, "Sir Trevor Brooking Stand north stand", is 6)
LOOP = 3  # a run of the prompt's words written this many times in one segment is the model
# going round its prompt ("Stratford station. Stratford station. Stratford station." over a
# real speaker's note at 10 dB, decoded at temperature 0), however sure it is; a steward may
# say a place twice
NO_SPEECH = 0.4  # a segment the model thought this likely to be silence ...
GUESS = -0.5  # ... written at an average log-probability under this is no speech: the "you",
# "Thanks for watching" base writes after a note ends (no_speech 0.40-0.77, log-probability
# -0.6 to -2.1), where speech scores no_speech <= 0.2
_WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> list[str]:
    """Lower-case words, punctuation off (how segments and the prompt are compared)."""
    return _WORD.findall(text.lower().replace("-", " "))


def _key(word: str) -> str:
    # "stations" echoes "station": plurals match the prompt's singulars
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


@dataclass(frozen=True)
class Prompt:
    """The prompt's pairs of neighbouring words, for telling an echo from speech."""

    pairs: frozenset[tuple[str, str]]


@dataclass(frozen=True)
class Word:
    """One word as the model wrote it (leading space and punctuation kept) and how sure it
    was of it."""

    text: str
    probability: float


def prompt_of(text: str) -> Prompt:
    """The prompt's pairs of neighbouring words, made once per worker."""
    ws = [_key(w) for w in words(text)]
    return Prompt(frozenset(zip(ws, ws[1:], strict=False)))


def no_speech(no_speech_prob: float, avg_logprob: float) -> bool:
    """Whether a segment was written over silence: the model thought it no speech and was
    unsure of what it wrote."""
    return no_speech_prob >= NO_SPEECH and avg_logprob < GUESS


def guessed(avg_logprob: float, compression_ratio: float) -> bool:
    """Whether the model had to guess a segment: it repeated itself or was unsure of it as a
    whole (where Whisper would decode again at a higher temperature; the worker does not)."""
    return compression_ratio > REPETITIVE or avg_logprob < UNSURE


def _runs(heard: Sequence[Word], prompt: Prompt) -> list[range]:
    """The runs (indices into `heard`) of two or more words in which every neighbouring
    pair is a pair of neighbours in the prompt."""
    flat: list[tuple[int, str]] = [(i, _key(t)) for i, w in enumerate(heard)
                                   for t in words(w.text)]
    runs: list[range] = []
    start = 0
    for k in range(1, len(flat) + 1):
        if k < len(flat) and (flat[k - 1][1], flat[k][1]) in prompt.pairs:
            continue
        if k - start >= 2:
            runs.append(range(flat[start][0], flat[k - 1][0] + 1))
        start = k
    return runs


def echo_words(heard: Sequence[Word], prompt: Prompt, guess: bool) -> set[int]:
    """Which of a segment's words (indices) are prompt echo: a run of the prompt's words long
    enough to be the prompt recited or written LOOP times over, or, in a guessed segment, one
    the model was unsure of."""
    echo: set[int] = set()
    runs = _runs(heard, prompt)
    said = [tuple(_key(t) for i in run for t in words(heard[i].text)) for run in runs]
    for run, key in zip(runs, said, strict=True):
        span = [heard[i] for i in run]
        if (len(key) >= RECITED or said.count(key) >= LOOP
                or (guess and sum(w.probability for w in span) / len(span) <= LOW)):
            echo.update(run)
    return echo


def without_echo(heard: Sequence[Word], prompt: Prompt, guess: bool) -> tuple[str, int]:
    """A segment's text with its echoed words left out, and how many words were left out
    (`guess`: the model had to guess the segment, see `guessed`)."""
    echo = echo_words(heard, prompt, guess)
    text = "".join(w.text for i, w in enumerate(heard) if i not in echo)
    return " ".join(text.split()), len(echo)
