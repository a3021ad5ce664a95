"""Who may do what: the role × command permission matrix and the roster."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from bot.domain.vocab import ROLES

ALL = frozenset(ROLES.keys())
HANDLERS = frozenset({"supervisor", "control", "safety_officer", "admin"})
COMMANDERS = frozenset({"safety_officer", "police_commander", "control", "admin"})
POLICE = frozenset({"police_liaison", "police_commander", "admin"})
READERS = ALL - {"steward"} | {"steward"}  # everyone known may read status

# Command name -> roles allowed. Commands missing here are refused for everyone.
PERMISSIONS: dict[str, frozenset[str]] = {
    "help": ALL,
    "join": ALL,
    "whoami": ALL,
    "incident": frozenset({"steward"}) | HANDLERS | {"police_liaison", "police_commander"},
    "form": frozenset({"steward"}) | HANDLERS | {"police_liaison", "police_commander"},
    "note": frozenset({"steward"}) | HANDLERS | {"police_liaison", "police_commander"},
    "ack": HANDLERS,
    "dispatch": HANDLERS,
    "onscene": HANDLERS | {"steward"},
    "contain": HANDLERS,
    "handover": HANDLERS | {"police_liaison", "police_commander"},
    "update": HANDLERS | {"steward", "police_liaison", "police_commander"},
    "resolve": HANDLERS,
    "escalate": HANDLERS | {"steward", "police_commander"},
    "arrest": frozenset({"police_liaison", "admin"}),
    "ban": frozenset({"police_liaison", "safety_officer", "admin"}),
    "status": ALL - {"steward"},
    "summary": ALL - {"steward"},
    "season": ALL - {"steward"},
    "briefing": ALL,
    "fixture": frozenset({"admin", "control", "safety_officer"}),
    "fixtures": ALL - {"steward"},
    "phase": frozenset({"control", "safety_officer", "admin"}),
    "methane": frozenset({"safety_officer", "control", "police_commander", "supervisor", "admin"}),
    "invite": frozenset({"admin", "control", "safety_officer"}),
    "export": frozenset({"admin", "police_commander", "safety_officer"}),
    "amend": HANDLERS,
    "reopen": HANDLERS,
    "merge": frozenset({"steward"}) | HANDLERS | {"police_liaison", "police_commander"},
    "hot": frozenset({"steward"}) | HANDLERS | {"police_liaison", "police_commander"},
    "web": ALL,  # a sign-in link to the control-room web view; it shows each role its part
}
# The control-room web view: who sees arrest and ban records there (never custody refs).
WEB_POLICE_VIEW = POLICE | {"safety_officer", "control"}
# What unknown people may do: nothing but join and read help.
STRANGER_COMMANDS = frozenset({"join", "help"})


def allowed(role: str | None, command: str) -> bool:
    """May someone with this role (None = unknown person) run this command?"""
    if role is None:
        return command in STRANGER_COMMANDS
    return role in PERMISSIONS.get(command, frozenset())


def commands_for(role: str) -> list[str]:
    """Commands a role may use, in menu order."""
    return [c for c, roles in PERMISSIONS.items() if role in roles]


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
