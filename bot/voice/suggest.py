"""From a transcript to a report: the ground's vocabulary as the model's prompt, and the
incident type, place and severity a steward most likely said (suggestions, never logged
without a tap)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.domain.grounds import Ground
from bot.domain.vocab import INCIDENT_TYPES, norm

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
SEVERITY = re.compile(r"\b(?:severity|sev|level|priority)\s+(one|two|three|four|five|[1-5])\b")
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
PROMPT_WORDS = 150  # Whisper's prompt holds about 224 tokens: stay well inside


@dataclass(frozen=True)
class Suggestion:
    """What the transcript most likely reports, best first in each list."""

    types: tuple[str, ...]
    zones: tuple[str, ...]
    severity: int | None  # only when said ("severity four"); else the type's default


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower().replace("-", " "))


def prompt_for(grounds: list[Ground]) -> str:
    """The grounds' vocabulary (stands, blocks, gates, places, incident words) as a prompt:
    Whisper spells these as the ground does instead of guessing."""
    places: list[str] = []
    for g in grounds:
        for z in g.zones.values():
            name = re.sub(r"\s*\(.*?\)", "", z.name)
            if re.search(r"(lower|upper) tier|^walkway at|concourse$", name, re.I):
                continue  # "<stand> lower tier" and the like: the parts are named below
            places.append(name)
            places += [a for a in z.aliases[:1]
                       if a.lower() not in name.lower() and not a.startswith(("block", "stand"))]
        places += [f"block {lo}" for z in g.zones.values() for lo, _hi in z.blocks]
    things = ["lower tier", "upper tier", "walkway", "concourse", "flare", "smoke bomb",
              "coins thrown", "fight", "pitch invader", "racist chanting", "drunk",
              "suspicious package", "collapsed", "crush", "drone", "ejected", "severity"]
    text = "Steward report: " + ", ".join(dict.fromkeys(places)) + ". " + ", ".join(things)
    return " ".join(text.split()[:PROMPT_WORDS]) + "."


def _phrases(words: list[str], size: int) -> list[tuple[int, str]]:
    return [(i, " ".join(words[i:i + size])) for i in range(len(words) - size + 1)]


def suggest_types(text: str, limit: int = 3) -> tuple[str, ...]:
    """Incident types the words name, most mentions first (then the first said)."""
    words = _words(text)
    found: dict[str, tuple[int, int]] = {}  # type -> (hits, first position)
    vocab = {**{k: k for k in INCIDENT_TYPES.labels}, **INCIDENT_TYPES.aliases}
    spoken = {p: t for t, ps in SPOKEN.items() for p in ps}
    for size in (3, 2, 1):
        for i, phrase in _phrases(words, size):
            key = spoken.get(phrase) or (vocab.get(phrase.replace(" ", "_")) if size == 1
                                         else None)
            if key is None:
                continue
            hits, first = found.get(key, (0, i))
            found[key] = (hits + 1, min(first, i))
    ranked = sorted(found, key=lambda k: (-found[k][0], found[k][1]))
    return tuple(ranked[:limit])


def suggest_zones(text: str, ground: Ground, limit: int = 3) -> tuple[str, ...]:
    """Places of the ground the words name: a block number first, then the longest names."""
    words = _words(text)
    found: dict[str, tuple[int, int]] = {}  # zone -> (specificity, first position)
    for i, w in enumerate(words):
        if w == "block" and i + 1 < len(words) and words[i + 1].isdigit():
            zone = ground.zone_of_block(int(words[i + 1]))
            if zone:
                found.setdefault(zone, (100, i))
    # names said without their bracketed part: "Billy Bonds Stand lower tier"
    plain = {norm(re.sub(r"\s*\(.*?\)", "", z.name)): z.id for z in ground.zones.values()}
    taken: set[int] = set()  # words inside a longer place already found
    for size in range(ground.max_words, 0, -1):
        for i, phrase in _phrases(words, size):
            if phrase.isdigit() or taken.intersection(range(i, i + size)):
                continue
            zone = ground.resolve(phrase) or plain.get(norm(phrase))
            if zone:
                taken.update(range(i, i + size))
                if zone not in found or found[zone][0] < size:
                    found[zone] = (size, i)
    ranked = sorted(found, key=lambda z: (-found[z][0], found[z][1]))
    return tuple(ranked[:limit])


def suggest(text: str, ground: Ground) -> Suggestion:
    """Type, place and severity suggested from what was said."""
    m = SEVERITY.search(text.lower())
    sev = None
    if m:
        sev = NUMBER_WORDS.get(m.group(1)) or int(m.group(1))
    return Suggestion(suggest_types(text), suggest_zones(text, ground), sev)
