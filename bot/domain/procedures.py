"""Reaching every steward at once: who a broadcast or a public-protection procedure targets,
and what it says. Pure rules; stewards are known by the club's rota name or tabard only."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot.domain.grounds import Ground
from bot.domain.messages import Button, Outbound, Reply
from bot.domain.plurals import counted
from bot.domain.unreached import Unreached
from bot.domain.vocab import norm

# The four public-protection procedures (Terrorism (Protection of Premises) Act 2025):
# key -> (title, the standing instruction every steward gets with it).
PROCEDURES: dict[str, tuple[str, str]] = {
    "evacuate": ("EVACUATE", "Open every exit on your route and move people out calmly "
                             "by the nearest safe exit. Follow your evacuation plan."),
    "invacuate": ("INVACUATE", "Move people inside to the protected area for your post. "
                               "Keep them away from glass and entrances."),
    "lockdown": ("LOCKDOWN", "Close and hold your doors and gates. Let nobody in or out "
                             "until control says so. Keep people away from entrances."),
    "allclear": ("ALL CLEAR", "The procedure is over. Return to normal duties; report "
                              "anything you saw to control."),
}
# The pin slot of the procedures' posts: the latest (ALL CLEAR included) is the one pinned,
# so a steward scrolling the channel finds the instruction in force on top.
PIN_SLOT = "procedure"
# Life-safety messages that are not procedures: they take the lane too (missing person).
LIFE_SAFETY_WORDS: dict[str, str] = {"missing": "MISSING", "found": "FOUND"}
TARGET_WORDS = ("all", "supervisors", "exits")
STEWARD_ROLES = frozenset({"steward", "supervisor"})
EXIT_KINDS = frozenset({"gate", "exit"})
MAX_TEXT = 500  # a broadcast is read on a phone at a post: short


@dataclass(frozen=True)
class Steward:
    """A deployed steward as the club's rota knows them: platform identity, rota name or
    tabard number, role and zone (no phone numbers, no personal data)."""

    who: str  # platform:user
    name: str
    role: str
    zone: str = ""


@dataclass(frozen=True)
class Target:
    """Whom a broadcast is for: everyone, supervisors, exit posts, or one zone."""

    kind: str  # "all", "supervisors", "exits" or "zone"
    zone: str = ""

    @property
    def key(self) -> str:
        """The target as one word ('all', 'zone:stb')."""
        return f"zone:{self.zone}" if self.kind == "zone" else self.kind


@dataclass(frozen=True)
class Broadcast:
    """A broadcast or procedure as recorded: what, to whom, and how many have it."""

    id: str
    kind: str  # "broadcast" or a PROCEDURES key
    target: str  # Target.key
    text: str
    at: str
    by: str
    sent: int  # stewards it was sent to
    acked: tuple[str, ...] = ()  # who pressed "I have it"
    missing: tuple[str, ...] = ()  # who has not (yet)
    planned: int = 0  # stewards the rota plans for its target (sent + unreached)
    unreached: tuple[Unreached, ...] = ()  # planned stewards the bot cannot reach
    zones: tuple[tuple[str, str], ...] = ()  # (who, zone) of everyone it was sent to
    names: tuple[tuple[str, str], ...] = ()  # (who, rota name) of everyone it was sent to
    posted: frozenset[str] = frozenset()  # who its one-to-many post reached

    @property
    def of(self) -> int:
        """The denominator of its counts: the plan, else (older records) those sent to."""
        return max(self.planned, self.sent)

    @property
    def procedure(self) -> bool:
        """A life-safety message (it takes the lane), not a plain broadcast."""
        return life_safety(self.kind)

    @property
    def word(self) -> str:
        """What it is, in one word for a status line ('EVACUATE', 'MISSING', 'Broadcast')."""
        return PROCEDURES[self.kind][0] if self.kind in PROCEDURES else \
            LIFE_SAFETY_WORDS.get(self.kind, "Broadcast")


def life_safety(kind: str) -> bool:
    """Whether a message of this kind takes the life-safety lane."""
    return kind in PROCEDURES or kind in LIFE_SAFETY_WORDS


def parse_target(word: str, ground: Ground) -> Target | None:
    """'all', 'supervisors', 'exits' or a zone of the ground; None when it is none of them."""
    got = leading_target([word], ground)
    return got[0] if got is not None and got[1] == 1 else None


def leading_target(words: list[str], ground: Ground) -> tuple[Target, int] | None:
    """(target, words used) the leading words name: 'all', 'supervisors', 'exits', or the
    longest run naming a zone by the ground's ids, names and aliases ("STB upper", "West
    Stand"); None when they name none of them."""
    w = norm(words[0]) if words else ""
    if w in ("all", "ground", "everyone", "whole"):
        return Target("all"), 1
    if w in ("supervisors", "supervisor", "sups"):
        return Target("supervisors"), 1
    if w in ("exits", "exit", "gates"):
        return Target("exits"), 1
    hit = ground.leading(words)
    return (Target("zone", hit[0]), hit[1]) if hit else None


def in_zone(steward_zone: str, zone: str) -> bool:
    """Whether a steward's post is the zone or inside it ('stb_upper' is in 'stb')."""
    return steward_zone == zone or steward_zone.startswith(zone + "_")


def reaches(target: Target, role: str, zone: str, ground: Ground) -> bool:
    """Whether a target reaches someone of this role posted in this zone (supervisors of a
    zone get its messages too)."""
    if role not in STEWARD_ROLES:
        return False
    if target.kind == "all":
        return True
    if target.kind == "supervisors":
        return role == "supervisor"
    if target.kind == "exits":
        z = ground.zones.get(zone)
        return role == "supervisor" or (z is not None and z.kind in EXIT_KINDS)
    return in_zone(zone, target.zone)


def targeted(stewards: Iterable[Steward], target: Target, ground: Ground) -> list[Steward]:
    """The stewards a target reaches (supervisors of a zone get its messages too)."""
    return sorted((s for s in stewards if reaches(target, s.role, s.zone, ground)),
                  key=lambda s: s.who)


def target_label(target: str, ground: Ground) -> str:
    """How a target reads in a message ('the whole ground', 'Gate B (away)')."""
    if target == "all":
        return "the whole ground"
    if target in ("supervisors", "exits"):
        return "all supervisors" if target == "supervisors" else "exit posts"
    return ground.label(target.removeprefix("zone:"))


def message_title(kind: str, target_text: str) -> str:
    """The title stewards see: the procedure in capitals (readable without colour)."""
    if kind in PROCEDURES:
        return f"🚨 {PROCEDURES[kind][0]} · {target_text}"
    return f"📣 Broadcast · {target_text}"


def message_body(kind: str, text: str) -> str:
    """What stewards read: control's words, then the standing instruction of a procedure."""
    if kind in PROCEDURES:
        return "\n".join(p for p in (text, PROCEDURES[kind][1]) if p)
    return text



def have_it_button(bid: str) -> list[list[Button]]:
    """The "I have it" button of a broadcast."""
    return [[Button("✅ I have it", f"/ihaveit {bid}", "primary")]]


def worst_first(bc: Broadcast, zones: dict[str, str]) -> list[str]:
    """Who has not acknowledged, the zones where the fewest have it first (`zones`: who ->
    their zone; one not known counts as a zone of its own)."""
    have: dict[str, list[int]] = {}
    for who in (*bc.acked, *bc.missing):
        n = have.setdefault(zones.get(who, ""), [0, 0])
        n[0] += who in bc.acked
        n[1] += 1
    return sorted(bc.missing, key=lambda w: (have[zones.get(w, "")][0] /
                                             have[zones.get(w, "")][1], zones.get(w, ""), w))


def chasers(bc: Broadcast, label: str, order: list[str], fixture: str) -> list[Outbound]:
    """A direct message to each of `order` (who, in order) still without a broadcast's
    "I have it": its words again, and the button."""
    reply = Reply(message_body(bc.kind, bc.text) + "\nTap \"I have it\" so control knows "
                  "you have it.", title="Reminder · " + message_title(bc.kind, label),
                  buttons=have_it_button(bc.id))
    return [Outbound(f"user:{who}", reply, fixture=fixture, chase=bc.id) for who in order]


def compose(kind: str, bid: str, label: str, text: str, to: list[Steward], fixture: str, *,
            title: str = "",
            buttons: Callable[[Steward], list[list[Button]]] | None = None,
            also: tuple[str, ...] = (), note: str = "", post: str = "",
            reached: frozenset[str] = frozenset()) -> list[Outbound]:
    """A broadcast's messages: reach first, then chase. One post (with "I have it") to the
    stewards' one-to-many chat when there is one (`post`, its audience), reaching every
    targeted steward in `reached` at once; a direct message (their buttons: "I have it"
    unless `buttons` says otherwise) to every other targeted steward, as a chaser that
    takes only the chasers' share of the platform's rate; and one to control (and to the
    `also` audiences; `note` added to it: who of the plan it cannot reach). A life-safety
    one's post and control's copies are urgent: they go ahead of everything, and nothing
    waits behind the direct messages; a procedure's post is pinned in place of the last."""
    title, body = title or message_title(kind, label), message_body(kind, text)
    urgent = bid if life_safety(kind) else ""
    have_it = have_it_button(bid)
    answers = "Check-ins" if kind == "rollcall" else "Acknowledgements"
    control_msg = Reply(f"{body}\nSent to {counted(len(to), 'steward')}. "
                        f"{answers} are counted in /status." + (f"\n{note}" if note else ""),
                        title=title,
                        buttons=[[Button("Who has it", "/status")]])
    outs = [Outbound(post, Reply(body, title=title, buttons=have_it), fixture=fixture,
                     urgent=urgent, pin=PIN_SLOT if kind in PROCEDURES else "", reaches=bid)
            ] if post else []
    outs += [Outbound(a, control_msg, fixture=fixture, urgent=urgent)
             for a in ("control", *(a for a in also if a != "control"))]
    outs += [Outbound(f"user:{s.who}", Reply(body, title=title, buttons=buttons(s) if buttons
                                             else have_it), fixture=fixture, chase=bid)
             for s in to if s.who not in reached]
    return outs
