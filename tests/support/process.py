"""A bot process started, or exited, within a deadline; stopped and read, or killed after a
failed test."""

from __future__ import annotations

import asyncio
import signal
import time

import aiohttp


async def started_or_exited(proc: asyncio.subprocess.Process, port: int,
                            timeout: float = 30.0) -> bool:
    """True once the process serves /healthz, False once it has exited."""
    end = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < end:
            if proc.returncode is not None:
                return False
            try:
                async with http.get(f"http://127.0.0.1:{port}/healthz") as resp:
                    if resp.status in (200, 503):
                        return True
            except aiohttp.ClientConnectionError:
                pass
            try:
                await asyncio.wait_for(proc.wait(), 0.2)
            except TimeoutError:
                pass
    raise AssertionError("matchday run neither started nor exited")


async def stop_and_read(proc: asyncio.subprocess.Process, grace: float = 30.0) -> str:
    """SIGTERM, then everything the process wrote (stdout, then stderr) once it exited."""
    proc.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(proc.communicate(), grace)
    return out.decode() + err.decode()


async def kill_if_running(proc: asyncio.subprocess.Process) -> None:
    """Kill the process unless it has exited (a test failed before stopping it)."""
    if proc.returncode is None:
        proc.kill()
        await proc.wait()
