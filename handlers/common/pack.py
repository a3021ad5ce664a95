"""/pack: the Safety Officer's button for the debrief pack: built on the server (PDF, CSVs,
signed manifest) and its place, page count and chain head given in the answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.core.dispatch import Ctx, Registry, Spec
from bot.domain.clock import iso
from bot.domain.messages import Reply, Result
from bot.evidence.debrief.pack_folder import build_pack
from bot.evidence.signing import load_or_create


async def pack_cmd(ctx: Ctx) -> Result:
    """/pack: build the fixture's debrief pack now."""
    fx = await ctx.fixture()
    settings = ctx.core.settings
    key = await asyncio.to_thread(load_or_create, settings.data_dir)
    out = Path(settings.data_dir) / "packs" / fx.id
    pack = await build_pack(ctx.store, ctx.facades, fx, ctx.ground(fx), settings.config_dir,
                            settings.zone,
                            out, key=key, at=iso(ctx.now), by=ctx.who)
    return Result(Reply(f"Debrief pack of {fx.title}: {pack.pages}-page PDF, "
                        f"{len(pack.files)} files under one signed manifest, in {pack.folder} "
                        f"on the bot's server (matchday verify checks it).\nChain head "
                        f"{pack.head}", title="Debrief pack"))


def register(registry: Registry) -> None:
    """Add /pack."""
    registry.add(Spec("pack", "/pack", "Build the debrief pack (PDF, CSVs, signed manifest)",
                      pack_cmd, aliases=("debrief",)))
