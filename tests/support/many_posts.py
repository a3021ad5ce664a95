"""A copy of the project's config whose ground gives the sample fixture many posts (a long
/deploy plan, a big rota), for tests of long answers."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "sample-westham-chelsea-20261125"  # ensure_sample_fixture's id on the tests' START


def config_with_posts(tmp_path: Path, mobile: int) -> Path:
    """The config with the sample fixture's STB mobile post made `mobile` posts."""
    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    ground = cfg / "grounds" / "london_stadium.toml"
    ground.write_text(ground.read_text() + f'\n[[fixtures."{SAMPLE}".post]]\n'
                      f'id = "stb_mobile_1"\ncount = {mobile}\n')
    return cfg
