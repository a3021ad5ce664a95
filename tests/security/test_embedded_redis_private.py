"""The embedded Redis and the files the bot writes are for the bot's own account only."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import redis

from bot.embedded_redis.supervisor import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "bot" / "scenarios" / "west_ham_chelsea.jsonl"


def _modes(top: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(top.stat().st_mode)}
    for path in top.rglob("*"):
        out[str(path.relative_to(top))] = stat.S_IMODE(path.stat().st_mode)
    return out


def _open_to_others(modes: dict[str, int]) -> dict[str, str]:
    return {name: oct(mode) for name, mode in modes.items() if mode & 0o077}


def test_an_unauthenticated_client_is_refused(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis", persistent=False)
    url = server.start()
    try:
        anonymous = redis.Redis(host="127.0.0.1", port=int(url.rsplit(":", 1)[1].split("/")[0]))
        with pytest.raises(redis.AuthenticationError):
            anonymous.hset("md:web:session:forged", mapping={"role": "police_commander"})
        anonymous.close()
        assert redis.Redis.from_url(url).ping()  # the bot's own URL carries the password
        assert server.password not in server.display_url
    finally:
        server.stop()


def _matchday(*args: str, data: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env |= {"MATCHDAY_DATA_DIR": str(data), "MATCHDAY_APPENDFSYNC": "always"}
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


@pytest.fixture
def used_data_dir() -> Path:
    """A data dir the real CLI has written to (AOF, state, charts, an export), in a folder
    every account may enter, so that only the bot's own modes protect it."""
    top = Path(tempfile.mkdtemp(prefix="md-shared-"))
    os.chmod(top, 0o755)
    data = top / "data"
    p = _matchday("run", "--as", "steward", data=data,
                  stdin="/incident missile @stb_walkway s4 coins\n:as police_liaison\n"
                        "/arrest throwing_missiles inside away ref=CUST-SECRET-77 inc=INC-1\n")
    assert p.returncode == 0, p.stderr
    fixture = _matchday("fixtures", "--json", data=data)
    assert fixture.returncode == 0, fixture.stderr
    p = _matchday("export", "--fixture", _first_fixture(fixture.stdout), "--out",
                  str(data / "exports" / "fa"), data=data)
    assert p.returncode == 0, p.stderr
    yield data
    subprocess.run(["rm", "-rf", str(top)], check=False)


def _first_fixture(fixtures_json: str) -> str:
    import json

    return json.loads(fixtures_json)[0]["id"]


def test_every_file_the_bot_writes_is_private(used_data_dir: Path) -> None:
    modes = _modes(used_data_dir)
    assert any(name.startswith("redis/appendonly") for name in modes), sorted(modes)
    assert any(name.startswith("exports/fa/") for name in modes), sorted(modes)
    assert _open_to_others(modes) == {}


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to a second uid needs root")
def test_another_local_account_reads_nothing_and_cannot_connect(used_data_dir: Path) -> None:
    server = EmbeddedRedis(used_data_dir / "redis")
    url = server.start()  # the CLI stopped it; start it again for the other account to try
    port = url.rsplit(":", 1)[1].split("/")[0]
    probe = f"""
import glob, socket
found = []
for path in glob.glob({str(used_data_dir)!r} + '/**', recursive=True):
    try:
        found.append(open(path, 'rb').read())
    except (IsADirectoryError, PermissionError):
        pass
s = socket.create_connection(('127.0.0.1', {port}))
s.sendall(b'*2\\r\\n$4\\r\\nKEYS\\r\\n$1\\r\\n*\\r\\n')
print(b'CUST-SECRET-77' in b''.join(found), s.recv(200).decode(errors='replace').strip())
"""
    try:
        # the venv's interpreter may sit under root's 0700 home; the system one is shared
        python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
        out = subprocess.run([python, "-c", probe], user="nobody", group="nogroup",
                             capture_output=True, text=True, timeout=30)
    finally:
        server.stop()
    assert out.returncode == 0, out.stderr
    leaked, answer = out.stdout.split(" ", 1)
    assert leaked == "False"
    assert answer.startswith("-NOAUTH"), answer
