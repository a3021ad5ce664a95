"""A replay's fence: it writes only into fixtures it created, unless run with --live."""

from __future__ import annotations

from dataclasses import dataclass, field

NO_DRILL_FIXTURE = ("This drill has no fixture of its own: start it with /fixture add, or "
                    "replay with --live to log into the live fixture.")


@dataclass
class Drill:
    """The fixtures a replay created and the one it runs; live=True (--live) lets its commands
    reach the store's active (live) fixture. The live schedule is never the drill's business:
    the replay's scheduler and escalation sweeps see only the fixtures the drill created."""

    live: bool = False
    created: set[str] = field(default_factory=set)
    active: str | None = None
    chosen: dict[str, str] = field(default_factory=dict)  # scope key -> fixture (/fixture use)

    def may_use(self, fx_id: str) -> bool:
        """May the drill's commands run on this fixture?"""
        return self.live or fx_id in self.created

    def refusal(self, fx_id: str) -> str:
        """Why a drill may not use a fixture (one line)."""
        return (f"{fx_id} is not this drill's fixture: a replay writes only into fixtures it "
                "created (replay with --live to use a live one).")
