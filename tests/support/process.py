"""A bot process started, or exited, within a deadline."""

from __future__ import annotations

import asyncio
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
