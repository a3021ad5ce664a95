"""From a transcript to a report: the ground's vocabulary as the model's prompt, and the
incident type, place and severity a steward most likely said (suggestions, never logged
without a tap)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from bot.domain.grounds import Ground
from bot.domain.vocab import INCIDENT_TYPES

# Words stewards say for each type, beyond the vocabulary's keys, labels and aliases.
SPOKEN: dict[str, tuple[str, ...]] = {
    "missile": ("thrown", "throwing", "threw", "coin", "coins", "bottle", "bottles",
                "lighter", "lighters", "object", "objects", "missiles", "missile"),
    "pyro": ("flare", "flares", "smoke bomb", "smoke bombs", "pyro", "pyrotechnic",
             "pyrotechnics", "firework", "fireworks"),
    "pitch_incursion": ("on the pitch", "onto the pitch", "pitch invader", "invaded",
                        "ran on", "pitch incursion"),
    "segregation_breach": ("segregation", "broke through", "breached", "breach",
                           "climbing over", "climbed over", "sterile area"),
    "disorder": ("fight", "fighting", "fights", "punches", "punching", "brawl", "scuffle",
                 "violence", "disorder"),
    "antisocial": ("abusive", "swearing", "antisocial", "anti social", "spitting"),
    "discriminatory": ("racist", "racism", "homophobic", "monkey", "discriminatory",
                       "abuse chanting", "sectarian"),
    "alcohol": ("drunk", "intoxicated", "drinking", "beer", "alcohol", "cans"),
    "drugs": ("drugs", "drug", "cannabis", "cocaine", "weed", "powder"),
    "criminal_damage": ("damage", "damaged", "smashed", "broken seat", "broken seats",
                        "vandalism", "ripped"),
    "assault_staff": ("assaulted", "attacked a steward", "punched a steward",
                      "hit a steward", "assault"),
    "crowd_density": ("crush", "overcrowded", "overcrowding", "packed", "crowding", "surge",
                      "surging", "too many"),
    "persistent_standing": ("standing", "won't sit", "refusing to sit"),
    "suspicious_item": ("suspicious", "package", "unattended", "bag left", "holdall"),
    "medical": ("collapsed", "unconscious", "injured", "injury", "medical", "first aid",
                "bleeding", "fainted", "chest pain", "paramedic", "paramedics", "fitting"),
    "safeguarding": ("lost child", "missing child", "vulnerable", "safeguarding"),
    "fire": ("fire", "burning", "flames"),
    "structural": ("structural", "cracked", "crack", "collapsed barrier", "loose railing"),
    "entry": ("ticket", "tickets", "turnstile jumping", "jumped the turnstile", "tailgating",
              "no ticket", "entry"),
    "drone": ("drone", "drones"),
    "ejection": ("ejected", "eject", "ejection", "thrown out", "removed from the ground"),
}
SEVERITY = re.compile(r"\b(?:severity|sev|level|priority)\s+"
                      r"(one|two|three|four|five|for|to|too|[1-5])\b")
# "severity for": how Whisper often writes "four" after "severity"
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "for": 4, "to": 2,
                "too": 2}
PROMPT_WORDS = 150  # Whisper's prompt holds about 224 tokens: stay well inside
NEAR_WORDS = 80  # words looked at for near misses (difflib costs grow with the text)
NEAR_CUTOFF = 0.8
NEAR_MIN_CHARS = 5


@dataclass(frozen=True)
class Suggestion:
    """What the transcript most likely reports, best first in each list."""

    types: tuple[str, ...]
    zones: tuple[str, ...]
    severity: int | None  # only when said ("severity four"); else the type's default


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower().replace("-", " "))


KIND_WORDS = {"stand": "Stands", "gate": "Gates", "outside": "Outside",
              "perimeter": "Pitchside", "segregation": "Segregation"}
INCIDENT_WORDS = ("flare, smoke bomb, pyro, coins thrown, bottles, fight, pitch invader, "
                  "racist chanting, drunk, drugs, suspicious package, collapsed, first aid, "
                  "crush, lost child, fire, drone, ticket, ejected, severity four")


def prompt_for(grounds: list[Ground]) -> str:
    """The grounds' vocabulary (stands and what people call them, blocks, gates, outside
    places, incident words) as a prompt in short sentences: Whisper then spells these as the
    ground does, and a prompt that reads like speech keeps it from reciting lists."""
    parts: list[str] = []
    for g in grounds:
        parts.append(f"Steward reports at {g.name}.")
        for kind, word in KIND_WORDS.items():
            names = []
            for z in g.zones.values():
                if z.kind != kind:
                    continue
                name = without_brackets(z.name)
                alias = next((a for a in z.aliases if a.lower() not in name.lower()
                              and not a.lower().startswith(("stand ", "block"))), "")
                names.append(f"{name} ({alias})" if alias and kind == "stand" else name)
            if names:
                parts.append(f"{word}: {', '.join(names)}.")
        blocks = sorted(lo for z in g.zones.values() for lo, _hi in z.blocks)
        if blocks:
            parts.append("Upper tier, lower tier, walkway, concourse, "
                         + ", ".join(f"block {b}" for b in blocks[:4]) + ".")
    parts.append(f"Incidents: {INCIDENT_WORDS}.")
    return " ".join(" ".join(parts).split()[:PROMPT_WORDS])


def _phrases(words: list[str], size: int) -> list[tuple[int, str]]:
    return [(i, " ".join(words[i:i + size])) for i in range(len(words) - size + 1)]


STOP = {"the", "a", "an", "at", "in", "on", "of", "to", "and", "from", "by", "near", "is"}


@dataclass(frozen=True)
class _Phrases:
    """Vocabulary phrases -> key, indexed for near-miss lookups that stay cheap: one word is
    compared with words of about its length, longer phrases with those sharing a word."""

    keys: dict[str, str]
    short: dict[int, list[str]]  # one-word phrases by length
    by_word: dict[tuple[int, str], list[str]]  # (words in phrase, a word of it) -> phrases


def _index(keys: dict[str, str]) -> _Phrases:
    short: dict[int, list[str]] = {}
    by_word: dict[tuple[int, str], list[str]] = {}
    for p in keys:
        ws = p.split()
        if len(ws) == 1:
            short.setdefault(len(p), []).append(p)
        for w in set(ws) - STOP:
            by_word.setdefault((len(ws), w), []).append(p)
    return _Phrases(keys, short, by_word)


def _near(phrase: str, size: int, index: _Phrases) -> str | None:
    """The vocabulary phrase a misheard one is closest to ("milli bonds stand"), if close."""
    ws = phrase.split()
    if len(phrase) < NEAR_MIN_CHARS or ws[0] in STOP or ws[-1] in STOP:
        return None
    if size == 1:
        pool = [p for n in range(len(phrase) - 2, len(phrase) + 3)
                for p in index.short.get(n, [])]
    else:
        pool = sorted({p for w in ws for p in index.by_word.get((size, w), [])})
    hits = difflib.get_close_matches(phrase, pool, n=1, cutoff=NEAR_CUTOFF) if pool else []
    return hits[0] if hits else None


_TYPE_PHRASES = {p: t for t, ps in SPOKEN.items() for p in ps} | {
    k.replace("_", " "): v for k, v in
    {**{k: k for k in INCIDENT_TYPES.labels}, **INCIDENT_TYPES.aliases}.items()}
_TYPE_INDEX = _index(_TYPE_PHRASES)


def suggest_types(text: str, limit: int = 3) -> tuple[str, ...]:
    """Incident types the words name, most mentions first (then the first said); a near
    miss of a word ("flail" for "flare") counts half."""
    words = _words(text)
    found: dict[str, tuple[float, int]] = {}  # type -> (hits, first position)
    taken: set[int] = set()
    for exact in (True, False):
        for size in (3, 2, 1):
            for i, phrase in _phrases(words if exact else words[:NEAR_WORDS], size):
                if taken.intersection(range(i, i + size)):
                    continue
                key = _TYPE_PHRASES.get(phrase) if exact else \
                    _TYPE_PHRASES.get(_near(phrase, size, _TYPE_INDEX) or "")
                if key is None:
                    continue
                taken.update(range(i, i + size))
                hits, first = found.get(key, (0.0, i))
                found[key] = (hits + (1.0 if exact else 0.5), min(first, i))
    ranked = sorted(found, key=lambda k: (-found[k][0], found[k][1]))
    return tuple(ranked[:limit])


_places: dict[str, _Phrases] = {}


def _place_phrases(ground: Ground) -> _Phrases:
    """Every name of every place as spoken words -> zone id (names without their bracketed
    part too: "Billy Bonds Stand lower tier"), and the phrases by word count."""
    if ground.id not in _places:
        names: dict[str, str] = {}
        for z in ground.zones.values():
            said = [without_brackets(z.name)]
            m = re.fullmatch(r"(walkway) at the top of the (.+)", said[0], re.I)
            if m:  # "Bobby Moore Stand walkway"
                said.append(f"{m.group(2)} {m.group(1)}")
            for name in (z.id, z.name, *said, *z.aliases):
                names.setdefault(" ".join(_words(name.replace("_", " "))), z.id)
        names.pop("", None)
        _places[ground.id] = _index(names)
    return _places[ground.id]


def suggest_zones(text: str, ground: Ground, limit: int = 3) -> tuple[str, ...]:
    """Places of the ground the words name: a block number first, then the names that
    match the most characters (a near miss, "milli bonds stand", counts by how near)."""
    words = _words(text)
    found: dict[str, tuple[float, int]] = {}  # zone -> (score, first position)
    for i, w in enumerate(words):
        if w == "block" and i + 1 < len(words) and words[i + 1].isdigit():
            zone = ground.zone_of_block(int(words[i + 1]))
            if zone:
                found.setdefault(zone, (1000.0, i))
    index = _place_phrases(ground)
    names = index.keys
    longest = max(len(p.split()) for p in names)
    seen: list[tuple[float, int, int, str]] = []  # (score, first word, words, zone)
    for size in range(longest, 0, -1):
        for i, phrase in _phrases(words, size):
            if phrase.isdigit():
                continue
            key = phrase if phrase in names else (
                _near(phrase, size, index) if i < NEAR_WORDS else None)
            if key is None:
                continue
            ratio = 1.0 if key == phrase else \
                difflib.SequenceMatcher(None, phrase, key).ratio()
            seen.append((ratio * ratio * len(key), i, size, names[key]))
    taken: set[int] = set()  # words already inside a better-matching place
    for score, i, size, zone in sorted(seen, key=lambda c: (-c[0], c[1])):
        if taken.intersection(range(i, i + size)):
            continue
        taken.update(range(i, i + size))
        if zone not in found or found[zone][0] < score:
            found[zone] = (score, i)
    ranked = sorted(found, key=lambda z: (-found[z][0], found[z][1]))
    return tuple(ranked[:limit])


def suggest(text: str, ground: Ground) -> Suggestion:
    """Type, place and severity suggested from what was said."""
    m = SEVERITY.search(text.lower())
    sev = None
    if m:
        sev = NUMBER_WORDS.get(m.group(1)) or int(m.group(1))
    return Suggestion(suggest_types(text), suggest_zones(text, ground), sev)


def without_brackets(text: str) -> str:
    """The text with each "(...)" aside removed, in one pass (no backtracking)."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return " ".join("".join(out).split())
