"""The product's fixed vocabularies (keys are stable, labels are what people see)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field


def norm(text: str) -> str:
    """Fold a user's word for lookup: lower case, spaces and dashes as underscores (the one
    normalisation of every id and key people type: grounds, zones, posts, offences, …)."""
    return text.strip().lower().replace("-", "_").replace(" ", "_")


def match_key(word: str, keys: Iterable[str]) -> str | None:
    """The key among `keys` (config ids: grounds, posts, checklist items) a typed word names
    once both are folded by `norm`, or None."""
    w = norm(word)
    return next((k for k in keys if norm(k) == w), None)


@dataclass(frozen=True)
class Vocabulary:
    """A closed set of keys with labels and aliases, resolved case-insensitively."""

    name: str
    labels: dict[str, str]
    aliases: dict[str, str] = field(default_factory=dict)

    def resolve(self, word: str) -> str | None:
        """The key a word names (key, label or alias), or None."""
        w = norm(word)
        if w in self.labels:
            return w
        if w in self.aliases:
            return self.aliases[w]
        for key, label in self.labels.items():
            if norm(label) == w:
                return key
        return None

    def suggest(self, word: str) -> list[str]:
        """Keys close to a mistyped word, best first (none for an enormous word: difflib is
        quadratic in its length)."""
        if len(word) > 60:
            return []
        w = norm(word)
        pool = {**{k: k for k in self.labels}, **self.aliases}
        pool.update({norm(label): k for k, label in self.labels.items()})
        out: list[str] = []
        for match in difflib.get_close_matches(w, list(pool), n=5, cutoff=0.6):
            if pool[match] not in out:
                out.append(pool[match])
        return out[:3]

    def label(self, key: str) -> str:
        """The human label of a key."""
        return self.labels.get(key, key)

    def keys(self) -> list[str]:
        """All keys in their defined order."""
        return list(self.labels)


ROLES = Vocabulary(
    "role",
    {
        "steward": "Steward",
        "supervisor": "Supervisor",
        "control": "Control room",
        "safety_officer": "Safety Officer",
        "police_liaison": "Police liaison",
        "police_commander": "Police commander",
        "viewer": "Viewer",
        "admin": "Admin",
    },
    {"so": "safety_officer", "dfo": "police_liaison", "silver": "police_commander",
     "bronze": "police_commander", "commander": "police_commander", "loggist": "control"},
)

INCIDENT_TYPES = Vocabulary(
    "incident type",
    {
        "missile": "Throwing missiles",
        "pyro": "Pyrotechnics",
        "pitch_incursion": "Pitch incursion",
        "segregation_breach": "Segregation breach",
        "disorder": "Disorder / fight",
        "antisocial": "Antisocial behaviour",
        "discriminatory": "Discriminatory abuse",
        "alcohol": "Alcohol",
        "drugs": "Drugs",
        "criminal_damage": "Criminal damage",
        "assault_staff": "Assault on staff",
        "crowd_density": "Crowd density",
        "persistent_standing": "Persistent standing",
        "suspicious_item": "Suspicious item",
        "medical": "Medical",
        "safeguarding": "Safeguarding",
        "fire": "Fire",
        "structural": "Structural",
        "entry": "Entry / turnstile",
        "drone": "Drone",
        "ejection": "Ejection",
        "other": "Other",
    },
    {
        "missiles": "missile", "throwing": "missile", "flare": "pyro", "flares": "pyro",
        "smoke": "pyro", "pitch": "pitch_incursion", "incursion": "pitch_incursion",
        "segregation": "segregation_breach", "breach": "segregation_breach", "fight": "disorder",
        "violence": "disorder", "asb": "antisocial", "racist": "discriminatory",
        "racism": "discriminatory", "homophobic": "discriminatory", "drunk": "alcohol",
        "damage": "criminal_damage", "assault": "assault_staff", "crush": "crowd_density",
        "crowd": "crowd_density", "standing": "persistent_standing", "package": "suspicious_item",
        "suspicious": "suspicious_item", "bag": "suspicious_item", "injury": "medical",
        "first_aid": "medical", "child": "safeguarding", "turnstile": "entry",
        "ticket": "entry", "tickets": "entry", "eject": "ejection", "ejected": "ejection",
    },
)

SEVERITIES = {
    1: "1 log only",
    2: "2 supervisor",
    3: "3 safety officer",
    4: "4 police",
    5: "5 major incident",
}

STATUSES = Vocabulary(
    "status",
    {
        "reported": "Reported",
        "acknowledged": "Acknowledged",
        "dispatched": "Dispatched",
        "on_scene": "On scene",
        "contained": "Contained",
        "handed_to_police": "Handed to police",
        "closed": "Closed",
    },
    {"ack": "acknowledged", "acked": "acknowledged", "onscene": "on_scene",
     "police": "handed_to_police", "resolved": "closed", "done": "closed"},
)
STATUS_ORDER = STATUSES.keys()
OPEN_STATUSES = STATUS_ORDER[:-1]

PHASES = Vocabulary(
    "phase",
    {
        "pre": "Pre-match",
        "gates": "Gates open",
        "first_half": "First half",
        "half_time": "Half time",
        "second_half": "Second half",
        "full_time": "Full time",
        "egress": "Egress",
        "closed": "Closed",
    },
    {"prematch": "pre", "pre_match": "pre", "ko": "first_half", "kickoff": "first_half",
     "1h": "first_half", "ht": "half_time", "2h": "second_half", "ft": "full_time"},
)

RISK_CATEGORIES = Vocabulary(
    "risk category",
    {
        "police_free": "Police free",
        "A": "Category A (low)",
        "B": "Category B (medium)",
        "C": "Category C (high)",
        "C-IRD": "Category C-IRD (high, increased risk of disorder)",
    },
    {"a": "A", "b": "B", "c": "C", "c_ird": "C-IRD", "cird": "C-IRD", "ird": "C-IRD",
     "pf": "police_free", "free": "police_free"},
)

OFFENCES = Vocabulary(
    "offence",
    {
        "violent_disorder": "Violent disorder",
        "public_disorder": "Public disorder",
        "throwing_missiles": "Throwing missiles",
        "entering_the_pitch": "Entering the pitch",
        "possession_pyrotechnics": "Possession of pyrotechnics",
        "alcohol_offences": "Alcohol offences",
        "racist_indecent_chanting": "Racist / indecent chanting",
        "ticket_touting": "Ticket touting",
        "breach_of_banning_order": "Breach of banning order",
        "criminal_damage": "Criminal damage",
        "possession_offensive_weapon": "Possession of an offensive weapon",
        "class_a_drugs": "Class A drugs",
        "other": "Other (non-Schedule 1)",
    },
    {"violent": "violent_disorder", "vd": "violent_disorder", "disorder": "public_disorder",
     "public_order": "public_disorder", "missiles": "throwing_missiles",
     "missile": "throwing_missiles", "pitch": "entering_the_pitch",
     "pitch_incursion": "entering_the_pitch", "pyro": "possession_pyrotechnics",
     "pyrotechnics": "possession_pyrotechnics", "alcohol": "alcohol_offences",
     "drunk": "alcohol_offences", "racist": "racist_indecent_chanting",
     "chanting": "racist_indecent_chanting", "touting": "ticket_touting",
     "tout": "ticket_touting", "breach": "breach_of_banning_order",
     "fbo": "breach_of_banning_order",
     "damage": "criminal_damage", "weapon": "possession_offensive_weapon",
     "knife": "possession_offensive_weapon", "drugs": "class_a_drugs",
     "class_a": "class_a_drugs"},
)

BAN_TYPES = Vocabulary(
    "banning order type",
    {
        "fbo_s14a": "FBO s14A (on conviction)",
        "fbo_s14b": "FBO s14B (on complaint)",
        "club_fixed_term": "Club ban, fixed term",
        "club_season": "Club ban, season",
        "club_lifetime": "Club ban, lifetime",
        "stadium": "Stadium ban",
    },
    {"s14a": "fbo_s14a", "14a": "fbo_s14a", "s14b": "fbo_s14b", "14b": "fbo_s14b",
     "fbo": "fbo_s14a", "fixed": "club_fixed_term", "fixed_term": "club_fixed_term",
     "season": "club_season", "lifetime": "club_lifetime", "life": "club_lifetime"},
)

BAN_STATUSES = Vocabulary(
    "ban status",
    {"proposed": "Proposed", "pending_court": "Pending court", "active": "Active",
     "appealed": "Appealed", "expired": "Expired"},
    {"pending": "pending_court", "court": "pending_court", "in_force": "active"},
)

AFFILIATIONS = Vocabulary(
    "affiliation", {"home": "Home", "away": "Away", "unknown": "Unknown"}, {"neutral": "unknown"}
)
SUPPORTER_SIDES = Vocabulary(
    "supporter", {"home": "Home", "away": "Away", "neutral": "Neutral"}, {}
)
PLACES = Vocabulary("place", {"inside": "Inside the ground", "outside": "Outside the ground"},
                    {"in": "inside", "out": "outside"})
OUTCOMES = Vocabulary(
    "outcome",
    {"nfa": "No further action", "rui": "Released under investigation", "bailed": "Bailed",
     "charged": "Charged", "caution": "Caution"},
    {"bail": "bailed", "charge": "charged"},
)
