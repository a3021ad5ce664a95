"""The ground file's [ingress] section is checked at start-up and by check-config (issue 35)."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.config_check import check_config

CONFIG = Path(__file__).resolve().parents[2] / "config"


def _with(tmp_path: Path, old: str, new: str) -> list[str]:
    cfg = tmp_path / "config"
    shutil.copytree(CONFIG, cfg)
    ground = cfg / "grounds" / "london_stadium.toml"
    text = ground.read_text()
    assert old in text
    ground.write_text(text.replace(old, new))
    return check_config(cfg)[1]


def test_the_shipped_plan_maps_128_turnstiles_and_passes(tmp_path):
    assert _with(tmp_path, 'zone = "gate_a"\nstand = "stb"', 'zone = "gate_a"\nstand = "stb"') == []


def test_a_turnstile_at_two_entry_points_is_named(tmp_path):
    problems = _with(tmp_path, 'turnstiles = ["C001-C032"]', 'turnstiles = ["C001-C032", "A007"]')
    assert problems == ["grounds/london_stadium.toml: (file): ingress.entry[2]: turnstile A007 "
                        "is already at gate_a"]


def test_an_entry_into_an_unknown_stand_is_named(tmp_path):
    problems = _with(tmp_path, 'zone = "gate_c"\nstand = "bbs"', 'zone = "gate_c"\nstand = "bbx"')
    assert problems == ["grounds/london_stadium.toml: (file): ingress.entry[2]: stand 'bbx' is "
                        "not an [[ingress.stand]]"]
