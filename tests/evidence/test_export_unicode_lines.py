"""An export verifies whatever people typed: Unicode line separators (U+2028, U+2029, NEL)
stay inside their JSON line (found by the command fuzz test)."""

from bot.evidence.export import export_fixture
from bot.evidence.signing import new_key
from bot.evidence.verify import verify_dir


async def test_line_separators_in_user_text_do_not_break_verify(say, core, tmp_path):
    r = await say("/methane m=yes e=stb walkway t=fight h=first\u2028second\u2029third\x85"
                  "fourth a=gate a n=0 s=police", as_="safety_officer")
    assert r.reply.ok, r.reply.text
    fx = await core.active_fixture()
    out = await export_fixture(core.store, core.facades, fx.id, tmp_path / "ex", restricted=False,
                               key=new_key())
    result = verify_dir(out)
    assert result.ok, result
    assert result.events == len(await core.store.events(fx.id))
