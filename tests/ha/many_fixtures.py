"""A config folder for two live fixtures at two grounds: the project's config plus a second
ground and per-ground / per-fixture audiences in channels.toml."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.core.roles import DEFAULT_ROLES

WOMEN = "westhamwomen-chelseawomen-20261125"  # /fixture add West Ham Women v Chelsea Women …
ADD_WOMEN = ("/fixture add West Ham Women v Chelsea Women 2026-11-25 18:30 cat=B "
             "ground=rush_green")
# Chats of the second ground (Telegram ids, Slack channels).
W_CONTROL_TG, W_CONTROL_SLACK = "-1002000000001", "C1WCONTROL"
W_STEWARDS_TG = "-1002000000003"
W_COMMAND_TG = "-1003000000002"  # the women's fixture's own command chat (fixture section)

GROUND = """
id = "rush_green"
name = "Rush Green Stadium"
home_club = "West Ham United Women"

[[zone]]
id = "main_stand"
name = "Main Stand"
short = "Main"
adjacent = ["away_end"]

[[zone]]
id = "away_end"
name = "Away End"
short = "Away end"
adjacent = ["main_stand"]

[[zone]]
id = "gate_1"
name = "Gate 1"
kind = "gate"
"""

SCOPED = f"""

[grounds.rush_green.audiences.control]
readers = ["control", "safety_officer"]
telegram = ["{W_CONTROL_TG}"]
slack = ["{W_CONTROL_SLACK}"]
console = ["control-rush-green"]

[grounds.rush_green.audiences.stewards]
readers = ["steward", "supervisor"]
telegram = ["{W_STEWARDS_TG}"]
console = ["stewards-rush-green"]

[fixtures."{WOMEN}".audiences.command]
readers = ["safety_officer", "police_commander", "control"]
telegram = ["{W_COMMAND_TG}"]
console = ["command-women"]
"""


def two_ground_config(tmp_path: Path) -> Path:
    """A copy of config/ with Rush Green and its audiences."""
    cfg = tmp_path / "config"
    shutil.copytree(DEFAULT_ROLES.parent, cfg)
    (cfg / "grounds" / "rush_green.toml").write_text(GROUND)
    with (cfg / "channels.toml").open("a") as f:
        f.write(SCOPED)
    return cfg
