"""/healthz and /metrics: a prober and Prometheus see the bot's state, before any token is set."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import aiohttp

from bot.observe import metrics
from bot.observe.endpoints import health_routes
from bot.store import Store
from rigs.net import free_port, serving

ROOT = Path(__file__).resolve().parents[2]


async def _get(url: str, timeout: float = 30.0) -> tuple[int, str]:
    """GET once the server listens (it is starting in another process)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.get(url) as resp:
                    return resp.status, await resp.text()
            except aiohttp.ClientConnectionError:
                if loop.time() > end:
                    raise
                await asyncio.sleep(0.1)


async def test_run_http_without_tokens_is_headless_and_serves_health_and_metrics(
        redis_url, tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "SLACK_", "REDIS_URL"))} | {
        "REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path), "PORT": str(port),
        "MATCHDAY_LOG_FORMAT": "json"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", "--http", env=env, cwd=ROOT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        status, body = await _get(f"http://127.0.0.1:{port}/healthz")
        health = json.loads(body)
        assert status == 200 and health["status"] == "ok"
        assert health["store"]["reachable"] is True and health["role"] == "leader"
        status, text = await _get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200 and "matchday_store_seconds_bucket" in text
        proc.stdin.write(b"/incident missile @seg_ne s4\n")  # no console: nobody reads it
        await proc.stdin.drain()
        proc.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        assert b"Matchday Ops on" not in out and b"Logged" not in out
        logs = [json.loads(line) for line in err.decode().splitlines() if line.strip()]
        assert any("headless" in rec["msg"] for rec in logs)  # every line is JSON
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_healthz_is_503_when_the_store_does_not_answer():
    store = Store.from_url(f"redis://127.0.0.1:{free_port()}")  # nothing listens there
    try:
        async with serving(health_routes(store.gateway.ping, lambda: "standby")) as port:
            status, body = await _get(f"http://127.0.0.1:{port}/healthz")
        health = json.loads(body)
        assert status == 503 and health["status"] == "unavailable"
        assert health["store"]["reachable"] is False and health["role"] == "standby"
    finally:
        await store.close()


async def test_metrics_count_logged_reports_and_commands_by_outcome(say):
    def value(name: str, **labels: str) -> float:
        return metrics.REGISTRY.get_sample_value(name, labels) or 0.0

    logged = value("matchday_reports_logged_total", club="")
    ok = value("matchday_commands_total", command="incident", outcome="ok", club="")
    usage = value("matchday_commands_total", command="incident", outcome="usage", club="")
    assert (await say("/incident missile @seg_ne s4", as_="steward")).reply.ok
    await say("/incident missile @nowhere_at_all s9", as_="steward")
    assert value("matchday_reports_logged_total", club="") == logged + 1
    assert value("matchday_commands_total", command="incident", outcome="ok", club="") == ok + 1
    assert value("matchday_commands_total", command="incident", outcome="usage",
                 club="") == usage + 1
    text = metrics.exposition().decode()
    assert "matchday_escalations_fired_total" in text and "matchday_briefings_total" in text


async def _role(port: int) -> str:
    status, body = await _get(f"http://127.0.0.1:{port}/healthz")
    assert status == 200
    return json.loads(body)["role"]


async def test_of_two_replicas_one_leads_and_the_other_takes_over_when_it_stops(
        redis_url, tmp_path):
    ports = [free_port(), free_port()]
    procs = []
    for i, port in enumerate(ports):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TELEGRAM_", "SLACK_", "REDIS_URL"))} | {
            "REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path / str(i)),
            "PORT": str(port), "MATCHDAY_LEASE_MS": "1000"}
        procs.append(await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run", "--http", env=env, cwd=ROOT,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE))
        await _role(port)  # started (the first one has taken the lease by now)
    try:
        assert [await _role(p) for p in ports] == ["leader", "standby"]
        procs[0].send_signal(signal.SIGTERM)  # a clean stop gives the lease up
        assert await asyncio.wait_for(procs[0].wait(), 30) == 0
        loop = asyncio.get_running_loop()
        end = loop.time() + 15
        while await _role(ports[1]) != "leader":
            assert loop.time() < end, "the standby never took over"
            await asyncio.sleep(0.1)
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
