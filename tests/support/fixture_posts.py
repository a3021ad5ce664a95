"""Settings whose fixture has posts to fill (fixture `settings`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.settings import Settings, load_settings
from tests.support.cli import ROOT

SAMPLE = "sample-westham-chelsea-20261125"  # ensure_sample_fixture's id on the tests' START
OVERRIDE = f"""
[fixtures."{SAMPLE}"]
drop = ["gate_b_lane_2"]

[[fixtures."{SAMPLE}".post]]
id = "stb_mobile_1"
count = 3

[[fixtures."{SAMPLE}".post]]
id = "gate_a_fire"
kind = "static"
name = "Gate A steward"
qualification = false

[[fixtures."{SAMPLE}".post]]
id = "bms_230_gangway"
zone = "bms_upper"
name = "Block 230 gangway"
"""


def config_with_override(tmp_path: Path) -> Path:
    """A copy of the project's config whose ground file overrides the sample fixture's posts."""
    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    ground = cfg / "grounds" / "london_stadium.toml"
    ground.write_text(ground.read_text() + OVERRIDE)
    return cfg


@pytest.fixture
def settings(redis_url: str, tmp_path: Path) -> Settings:
    """The tests' settings over the config with the sample fixture's own posts."""
    return load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path / "data"),
                         MATCHDAY_CONFIG_DIR=str(config_with_override(tmp_path)))
