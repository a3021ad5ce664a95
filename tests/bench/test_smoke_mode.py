"""Benches rot when nothing runs them: CI runs each one's `--smoke` (bench/smoke.py), so every
bench must have it, and a bench must finish, not wait for good on a helper that died."""

from __future__ import annotations

import asyncio
import runpy
import sys
from pathlib import Path

import pytest

from bench import smoke


@pytest.mark.parametrize("script", smoke.benches(), ids=lambda p: p.stem)
def test_every_bench_takes_smoke(script: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    # its real command line, in this process: --help parses and exits before any work
    monkeypatch.setattr(sys, "argv", [str(script), "--help"])
    monkeypatch.setattr(sys, "path", list(sys.path))
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(script), run_name="__main__")
    assert done.value.code == 0
    assert "--smoke" in capsys.readouterr().out, f"{script.name} has no --smoke"


def test_the_runner_finds_the_benches_and_not_the_libraries() -> None:
    names = {p.stem for p in smoke.benches()}
    assert {"write_path", "web", "saturday", "voice"} <= names
    assert not names & smoke.LIBRARIES


def test_the_runner_also_runs_the_cases_a_bench_has_with_options_of_its_own() -> None:
    runs = smoke.runs()
    assert runs["saturday"][1] == ()
    bench, options = runs["saturday-clubs"]  # the Saturday on a deployment of 2 clubs (#39)
    assert bench.name == "saturday.py" and options == ("--clubs", "2")


async def test_write_path_counts_round_trips_on_a_server_with_a_password(

        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # its MONITOR connection once left the password out, died unseen, and the bench waited
    # on it for good after printing ratio_vs_raw_xadd
    monkeypatch.setenv("REDIS_URL", redis_url)
    write_path = runpy.run_path(str(smoke.BENCH / "write_path.py"), run_name="bench_test")
    async with write_path["bench_core"]() as (core, url, _tmp):
        await write_path["reports"](core, 5, 0)  # warm up, as the bench does (script load)
        per_report, evalsha = await asyncio.wait_for(
            write_path["round_trips"](core, core.store, url, 5, 10**7), 30)
    assert per_report == 1.0  # one EVALSHA a report, nothing else from the client
    assert evalsha == 1.0


async def test_a_dead_watcher_is_an_error_not_a_wait_for_ever() -> None:
    from bench.rig import beside

    async def watcher(ready: asyncio.Event) -> None:
        raise ConnectionRefusedError("MONITOR refused")  # before it could set `ready`

    ready = asyncio.Event()
    task = asyncio.create_task(watcher(ready))
    with pytest.raises(ConnectionRefusedError, match="MONITOR refused"):
        await asyncio.wait_for(beside(task, ready, 600, "MONITOR connected"), 10)


def test_smoke_sizes_give_way_to_options_given() -> None:
    from bench import cli

    ap = cli.parser()
    ap.add_argument("--reports", type=int, default=3000)
    ap.add_argument("--big", type=int, default=100_000)
    smoke_sizes = {"reports": 60, "big": 300}
    assert vars(cli.parse(ap, smoke_sizes, [])) == {"smoke": False, "reports": 3000,
                                                    "big": 100_000}
    ap = cli.parser()
    ap.add_argument("--reports", type=int, default=3000)
    ap.add_argument("--big", type=int, default=100_000)
    assert vars(cli.parse(ap, smoke_sizes, ["--smoke", "--big", "500"])) == {
        "smoke": True, "reports": 60, "big": 500}
