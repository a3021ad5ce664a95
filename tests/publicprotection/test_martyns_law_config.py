"""check-config reads the ground file's Martyn's Law section (issue 36, beyond): a measure
of an unknown kind or in an unknown zone, or a procedure that is not one of the four, is one
line naming the file and the key."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli import ROOT, matchday

GROUND = "grounds/london_stadium.toml"
BREAKS = [
    ('kind = "monitoring"', 'kind = "cctv"',
     "measure[0].kind: one of monitoring, movement, physical, information, not 'cctv'"),
    ('zones = ["gate_a", "gate_away", "gate_c"]\n\n[[measure]]\nid = "hvm"',
     'zones = ["gate_z"]\n\n[[measure]]\nid = "hvm"',
     "measure[1].zones: 'gate_z' is not a zone of this ground"),
    ('key = "invacuate"', 'key = "shelter"',
     "procedure[1].key: one of evacuate, invacuate, lockdown, allclear, not 'shelter'"),
]


@pytest.mark.parametrize(("old", "new", "line"), BREAKS, ids=[b[2].split(":")[0] for b in BREAKS])
def test_a_broken_martyns_law_section_is_one_line(tmp_path: Path, old: str, new: str,
                                                    line: str) -> None:
    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    path = cfg / GROUND
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    p = matchday("check-config", env={"MATCHDAY_CONFIG_DIR": str(cfg),
                                      "MATCHDAY_DATA_DIR": str(tmp_path / "data")})
    assert p.returncode == 1
    assert p.stdout == f"{GROUND}: {line}\n", p.stdout
