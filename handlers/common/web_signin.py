"""/web: a one-time sign-in link to the control-room web view."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec
from bot.domain.messages import Reply, Result
from bot.domain.vocab import ROLES
from bot.web.access import Access


async def web_cmd(ctx: Ctx) -> Result:
    """/web: a link, valid a few minutes and for one use, that signs a browser in as you."""
    if not ctx.cmd.private:  # a group would see the link, and anyone in it could use it
        return Result(Reply("Send /web to me in a direct message: the link signs in as you.",
                            ok=False))
    # the web state is not one of the handlers' parts: the one reach past Ctx (see #21)
    access = Access(ctx.core, ctx.facades)
    server = await access.running()
    if server is None:  # a link now would lead to a page that does not answer
        return Result(Reply("The control-room screen is not running, so a link would lead "
                            "nowhere. Whoever runs the bot starts it with `matchday run "
                            "--web` (or with webhooks); then send /web again.", ok=False))
    url = await access.issue_link(ctx.who, server)
    if url is None:  # the core lets only members this far; a member removed meanwhile
        return Result(Reply("You are not registered.", ok=False))
    ttl = server.link_ttl  # the running server's, when it is shorter than ours
    lasts = f"{ttl // 60} minutes" if ttl >= 120 else f"{ttl} seconds"
    role = ROLES.label(ctx.role or "")
    what = ("your own reports" if ctx.role == "steward"
            else "the map, log and board of tonight's fixture")
    return Result(Reply(f"{url}\nOpens the control room as {role} ({what}). One use, valid "
                        f"{lasts}: don't forward it.", title="Control room sign-in"))


def register(registry: Registry) -> None:
    """Add /web."""
    registry.add(Spec("web", "/web", "Sign-in link to the control-room screen", web_cmd,
                      aliases=("screen", "control_room"), reads_only=True))
