"""Word error rate as the voice bench and tests score it: both sides spelt the same way (the
rules of Whisper's English normaliser), edits in words, and prompt words a transcript holds
that the speaker did not say."""

from __future__ import annotations

import re

from bot.voice.echo import words as prompt_words

FILLERS = {"uh", "um", "er", "erm", "ah", "hmm", "mm"}  # dropped on both sides, as Whisper does
# both sides of the WER spelt the same way, by the rules of Whisper's English normaliser
# (whisper/normalizers/english.py): titles in full, contractions spelt out, British spellings
# as American ones (the few a steward's report may hold); nothing that could hide a wrong word
SPELLING = {"alright": "all right", "mr": "mister", "mrs": "missus", "dr": "doctor",
            "st": "saint", "won't": "will not", "can't": "can not", "let's": "let us",
            "colour": "color", "centre": "center", "metre": "meter", "programme": "program",
            "neighbour": "neighbor", "organise": "organize", "organised": "organized",
            "ok": "okay", "towards": "toward"}
CONTRACTIONS = [(re.compile(rf"{end}\b"), full) for end, full in (
    ("n't", " not"), ("'re", " are"), ("'d", " would"), ("'ll", " will"), ("'ve", " have"),
    ("'m", " am"))]  # not "'s": "is", "has" or a possessive (Whisper leaves it too)
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def spell(n: int) -> str:
    """A number under 1000 in words (both sides of the WER say numbers the same way)."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    rest = n % 100
    return ONES[n // 100] + " hundred" + (" and " + spell(rest) if rest else "")


def words(text: str) -> list[str]:
    """Lower case, numbers in words, contractions and titles spelt out, no punctuation."""
    text = re.sub(r"\d+", lambda m: f" {spell(int(m.group()))} " if int(m.group()) < 1000
                  else m.group(), text.lower().replace("\u2019", "'"))
    text = re.sub(r"(?<=\w)-(?=\w)", " ", text)
    text = " ".join(SPELLING.get(w, w) for w in re.findall(r"[a-z0-9']+", text))
    for end, full in CONTRACTIONS:
        text = end.sub(full, text)
    # "and" is left out: "one hundred and twelve" and "one hundred twelve" are the same
    return [w for w in text.replace("'", "").split() if w != "and" and w not in FILLERS]


def edits(ref: list[str], hyp: list[str]) -> int:
    """Levenshtein distance in words."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def echoed(pairs: list[tuple[str, str]], prompt: str) -> int:
    """Words of the prompt in the transcripts that the speakers did not say."""
    vocabulary = set(prompt_words(prompt))
    return sum(1 for ref, hyp in pairs for w in words(hyp)
               if w in vocabulary and w not in set(words(ref)))


def wer(pairs: list[tuple[str, str]]) -> float:
    """Corpus word error rate: all edits over all reference words."""
    total = sum(len(words(r)) for r, _ in pairs)
    return sum(edits(words(r), words(h)) for r, h in pairs) / total
