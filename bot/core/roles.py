"""Who may do what: the role × command permission matrix and the roster."""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bot.domain.vocab import ROLES

DEFAULT_ROLES = Path(__file__).resolve().parents[2] / "config" / "roles.toml"
# What unknown people may do: nothing but join and read help (not configurable).
STRANGER_COMMANDS = frozenset({"join", "help"})
# Rights that are not chat commands but are granted in roles.toml like them.
EXTRA_RIGHTS = {
    "intel": "the restricted part of briefings (risk assessment, intelligence)",
    "export": "matchday export --restricted (custody references)",
}
EVERYTHING = "*"
MAX_NAMED = 3  # a refusal names up to this many roles that may; more is a list, not a hint
# whom a refusal tells people to ask, by the role that may
CONTACT = {"steward": "a steward", "supervisor": "your supervisor", "control": "control",
           "safety_officer": "the Safety Officer", "police_liaison": "the police liaison",
           "police_commander": "the police commander", "viewer": "a viewer",
           "admin": "your bot admin"}
NOT_ASKED = frozenset({"viewer"})


class RolesError(ValueError):
    """roles.toml is wrong; the message is one line for the operator."""


@dataclass(frozen=True)
class RoleMatrix:
    """Who may do what (config/roles.toml): rights per role and the rank order for invites.

    A right is a command name (`status`), a sub-command (`fixture list`), an extra right
    (`intel`, `export`) or `*` (everything). A sub-command that appears anywhere in the file
    is granted separately; one that appears nowhere follows its command.
    """

    rights: dict[str, frozenset[str]]
    rank: tuple[str, ...]  # highest first
    commands: tuple[str, ...] = ()  # command names in menu order

    @cached_property
    def controlled(self) -> frozenset[str]:
        """Sub-commands granted on their own ("fixture list", "briefing send")."""
        return frozenset(r for rs in self.rights.values() for r in rs if " " in r)

    def allowed(self, role: str | None, command: str, sub: str | None = None) -> bool:
        """May someone with this role (None = unknown person) run this (sub-)command?"""
        if role is None:
            return command in STRANGER_COMMANDS
        have = self.rights.get(role, frozenset())
        if EVERYTHING in have:
            return True
        key = f"{command} {sub}" if sub and f"{command} {sub}" in self.controlled else command
        return key in have

    def holders(self, command: str, sub: str | None = None) -> list[str]:
        """Roles that may run this (sub-)command, lowest rank first; admin (who may do
        everything) only when nobody else may."""
        can = [r for r in reversed(self.rank) if self.allowed(r, command, sub)]
        named = [r for r in can if EVERYTHING not in self.rights.get(r, frozenset())]
        return named or can

    def not_for(self, role: str, command: str, sub: str | None = None, *,
                asked: str = "") -> str:
        """The one-line refusal of a (sub-)command to a role, naming who may and whom to ask
        (the lowest-ranked role that may: the nearest person to go to); `asked` is the
        command as typed when its right is another's."""
        name = asked or (f"/{command} {sub}" if sub else f"/{command}")
        head = f"{name} is not for your role ({ROLES.label(role)})."
        who = self.holders(command, sub)
        if not who:
            return head + " Nobody's role has it (config/roles.toml)."
        labels = [ROLES.label(r) for r in who]
        only = labels[0] if len(labels) == 1 else \
            ", ".join(labels[:-1]) + " or " + labels[-1] if len(labels) <= MAX_NAMED else ""
        # a viewer only watches (a screen in a police van): nobody to go to for anything
        ask = next((r for r in who if r not in NOT_ASKED), who[0])
        return head + (f" Only {only} can." if only else "") + f" Ask {CONTACT[ask]}."

    def commands_for(self, role: str | None) -> list[str]:
        """Commands a role may use, in menu order (a command counts when its bare form does)."""
        return [c for c in self.commands if self.allowed(role, c)]

    def may_invite(self, inviter: str, role: str) -> bool:
        """Nobody invites a role ranked above their own, nor one with a right they lack."""
        if EVERYTHING in self.rights.get(inviter, frozenset()):
            return True
        if self.rank.index(role) < self.rank.index(inviter):
            return False
        mine = self.rights.get(inviter, frozenset())
        return EVERYTHING not in self.rights.get(role, frozenset()) \
            and self.rights.get(role, frozenset()) <= mine


def load_role_matrix(path: Path, commands: dict[str, frozenset[str]]) -> RoleMatrix:
    """Read roles.toml against the registered commands (name -> its sub-commands).

    RolesError names the first unknown role, command or sub-command, or a bad rank list.
    """
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RolesError(f"{path.name}: {exc}") from None
    known = ROLES.keys()
    rank = data.get("rank")
    if not isinstance(rank, list) or sorted(map(str, rank)) != sorted(known):
        raise RolesError(f"{path.name}: rank must list every role once, highest first "
                         f"({', '.join(known)})")
    table = data.get("roles")
    if not isinstance(table, dict):
        raise RolesError(f"{path.name}: no [roles.<role>] tables")
    rights: dict[str, frozenset[str]] = {role: frozenset() for role in known}
    for role, row in table.items():
        if role not in known:
            raise RolesError(f"{path.name}: unknown role {role!r} (roles: {', '.join(known)})")
        can = row.get("can") if isinstance(row, dict) else None
        if not isinstance(can, list) or not all(isinstance(r, str) for r in can):
            raise RolesError(f"{path.name}: [roles.{role}] needs can = [\"command\", ...]")
        for right in can:
            _check_right(path.name, role, right, commands)
        rights[role] = frozenset(" ".join(r.split()) for r in can)
    return RoleMatrix(rights, tuple(rank), tuple(commands))


def _check_right(file: str, role: str, right: str, commands: dict[str, frozenset[str]]) -> None:
    name, _, sub = " ".join(right.split()).partition(" ")
    if right == EVERYTHING or (name in EXTRA_RIGHTS and not sub):
        return
    if name not in commands:
        near = difflib.get_close_matches(name, [*commands, *EXTRA_RIGHTS], n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise RolesError(f"{file}: unknown command {name!r} for {role}{hint}")
    if sub and sub not in commands[name]:
        subs = ", ".join(sorted(commands[name])) or "none"
        raise RolesError(f"{file}: /{name} has no sub-command {sub!r} for {role} "
                         f"(sub-commands: {subs})")


@dataclass(frozen=True)
class Member:
    """A known person: their platform identity, role and home zone."""

    platform: str
    user: str
    role: str
    name: str = ""
    zone: str = ""

    @property
    def who(self) -> str:
        """platform:user key."""
        return f"{self.platform}:{self.user}"


def load_roster(path: Path) -> dict[str, Member]:
    """Members listed in roster.toml, by platform:user."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    members = {}
    for row in data.get("user", []):
        role = ROLES.resolve(row["role"])
        if role is None:
            raise ValueError(f"{path.name}: unknown role {row['role']!r} for {row.get('name')}")
        m = Member(str(row["platform"]), str(row["id"]), role, row.get("name", ""),
                   row.get("zone", ""))
        members[m.who] = m
    return members
