"""Issue 20, item 11: the HTTP server listens on this machine only unless MATCHDAY_BIND opens
it; the deployments (Procfile, container) open it explicitly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from rigs.net import free_port
from tests.support.web_cli import (
    status_of,
)

ROOT = Path(__file__).resolve().parents[2]


def listening_on(port: int) -> set[str]:
    """The IPv4/IPv6 addresses (hex, as the kernel writes them) listening on a TCP port."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, _, hexport = local.partition(":")
            if state == "0A" and int(hexport, 16) == port:  # 0A: LISTEN
                found.add(addr)
    return found


def bot_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    drop = {"REDIS_URL", "MATCHDAY_BIND"}
    return {k: v for k, v in os.environ.items() if k not in drop} | {
        "MATCHDAY_DATA_DIR": str(tmp_path), "MATCHDAY_APPENDFSYNC": "no"} | extra


def test_run_web_listens_on_loopback_only_by_default(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run", "--web"],
                            env=bot_env(tmp_path, PORT=str(port)), cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()  # the "running: ..." line once it listens
        while line and "running:" not in line:  # after e.g. the appendfsync-no warning
            line = proc.stderr.readline()
        assert "running:" in line, line
        assert listening_on(port) == {"0100007F"}  # 127.0.0.1, not 0.0.0.0 (00000000)
        assert f"http 127.0.0.1:{port}" in line  # and the operator is told so
        assert status_of(f"http://127.0.0.1:{port}/control/")[0] == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


def test_a_bad_bind_address_stops_the_start_with_one_line(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "bot.cli", "run", "--web"],
                         env=bot_env(tmp_path, PORT=str(free_port()),
                                     MATCHDAY_BIND="everywhere"),
                         cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "MATCHDAY_BIND" in run.stderr or "bind" in run.stderr, run.stderr
    assert "must be an IP address" in run.stderr


def test_the_deployments_open_the_port_explicitly() -> None:
    web = next(line for line in (ROOT / "Procfile").read_text().splitlines()
               if line.startswith("web:"))
    assert "MATCHDAY_BIND=0.0.0.0 " in web
    assert "MATCHDAY_BIND=0.0.0.0" in (ROOT / "deploy" / "Dockerfile").read_text()
    assert "MATCHDAY_BIND: 0.0.0.0" in (ROOT / "deploy" / "compose.yaml").read_text()
