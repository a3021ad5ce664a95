"""Issue 20, item 14: `--by` on the command line is only a claim (anyone with the CLI can type
any member). The audit trail of a CLI action now also names the operating-system account that
ran it, from the effective uid, not from an environment variable the caller can set."""

from __future__ import annotations

import os
import pwd

from bot.store.audit_trail import AuditTrail
from bot.store.web_sessions import WebSessions
from tests.support.cli import (
    SCENARIO,
    matchday,
)


async def test_restricted_export_and_web_link_name_the_unix_user(store, redis_url, tmp_path):
    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path / "data"),
           "USER": "someone_else", "LOGNAME": "someone_else"}
    assert matchday("replay", str(SCENARIO), "--json", env=env).returncode == 0
    p = matchday("export", "--fixture", "drill-westham-chelsea-20261202", "--out",
                 str(tmp_path / "r"), "--restricted", "--by", "console:police_commander",
                 env=env)
    assert p.returncode == 0, p.stderr
    await WebSessions(store.gateway).announce("http://127.0.0.1:8080", 60)  # a control room runs
    p = matchday("web-link", "--by", "console:control", env=env)
    assert p.returncode == 0, p.stderr
    me = pwd.getpwuid(os.geteuid()).pw_name
    trail = await AuditTrail(store.gateway).audit_log(200, fixture="drill-westham-chelsea-20261202")
    for action, who in (("export.restricted", "console:police_commander"),
                        ("export.head", "console:police_commander"),
                        ("cli.web-link", "console:control")):
        [entry] = [a for a in trail if a["action"] == action]
        assert entry["who"] == who
        assert me in entry.get("unix_user", ""), entry
        assert "someone_else" not in entry.get("unix_user", "")
