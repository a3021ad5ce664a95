"""People and help: /help, /whoami, /invite, /join."""

from __future__ import annotations

import secrets

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.core.roles import STRANGER_COMMANDS
from bot.domain.clock import iso
from bot.domain.messages import Reply, Result
from bot.domain.vocab import INCIDENT_TYPES, ROLES
from handlers.words import resolve_word

INVITE_TTL = 24 * 3600


async def help_cmd(ctx: Ctx) -> Result:
    """/help [command]: what you can do, in one phone screen."""
    registry = ctx.core.registry
    if ctx.args:
        spec = registry.lookup(ctx.args[0].lstrip("/"))
        if spec is None or spec.hidden:
            raise UsageError(f"No command /{ctx.args[0].lstrip('/')}.")
        if not ctx.core.roles.allowed(ctx.role, spec.name):
            if ctx.role is None:
                return Result(Reply(f"/{spec.name} is for registered people: ask control for "
                                    "an invite code, then send /join <code>."))
            return Result(Reply(ctx.core.roles.not_for(ctx.role, spec.name)))
        text = f"{spec.summary}\nUsage: {spec.usage}"
        denied = sorted({f"/{spec.name} {sub}" for sub in spec.subcommands.values()
                         if not ctx.core.roles.allowed(ctx.role, spec.name, sub)})
        if denied:
            text += f"\nNot for your role: {', '.join(denied)}."
        if spec.name == "incident":
            text += "\nTypes: " + ", ".join(INCIDENT_TYPES.keys())
        return Result(Reply(text, title=f"/{spec.name}"))
    role = ctx.role
    names = [registry.specs[n] for n in ctx.core.roles.commands_for(role)
             if not registry.specs[n].hidden]
    lines = [f"/{s.name} – {s.summary}" for s in names]
    if role is None:
        lines.append("You are not registered yet: ask control for an invite code.")
    elif role == "steward":
        lines.insert(0, "Tap /incident to report: 3 taps. Radio control if in doubt.")
    return Result(Reply("\n".join(lines), title="Matchday Ops"))


async def whoami_cmd(ctx: Ctx) -> Result:
    """/whoami: who the bot thinks you are."""
    m = ctx.member
    if m is None:
        return Result(Reply("Not registered. Send /join <code> with an invite code."))
    zone = f", zone {m.zone}" if m.zone else ""
    return Result(Reply(f"{m.name or m.user}: {ROLES.label(m.role)}{zone} ({ctx.who})"))


async def invite_cmd(ctx: Ctx) -> Result:
    """/invite <role>: a one-time code, valid 24 hours, for someone to /join with."""
    if len(ctx.args) != 1:
        raise UsageError("Which role?")
    role = resolve_word(ROLES, ctx.args[0], "role")
    if ctx.role is None or not ctx.core.roles.may_invite(ctx.role, role):
        return Result(Reply(f"You can't invite a {ROLES.label(role)}: that role is above yours "
                            "or can do things yours cannot.", ok=False))
    code = secrets.token_hex(4)
    await ctx.store.create_invite(code, role, ctx.who, INVITE_TTL)
    await ctx.store.audit(ctx.who, "invite", role, iso(ctx.now))
    return Result(Reply(f"Invite for a {ROLES.label(role)}: /join {code} (one use, 24 hours)."))


async def join_cmd(ctx: Ctx) -> Result:
    """/join <code>: link your chat account to an invite."""
    if ctx.member is not None:
        return Result(Reply(f"You're already registered as {ROLES.label(ctx.member.role)}."))
    if len(ctx.args) != 1:
        raise UsageError("Send the code you were given.")
    role = await ctx.store.redeem_invite(ctx.args[0].strip().lower(), ctx.who,
                                         ctx.cmd.user_name, iso(ctx.now))
    if role is None:  # the core audits the refusal
        return Result(Reply("That code is unknown, used or expired. Ask control for a new one.",
                            ok=False))
    ctx.core.cache.drop("member:" + ctx.who)
    await ctx.store.audit(ctx.who, "joined", role, iso(ctx.now))
    return Result(Reply(f"Welcome. You're registered as {ROLES.label(role)}. Send /help."))


def register(registry: Registry) -> None:
    """Add people and help commands."""
    registry.add(Spec("help", "/help [command]", "What you can do", help_cmd,
                      aliases=("start", "h", "?")))
    registry.add(Spec("whoami", "/whoami", "Who the bot thinks you are", whoami_cmd,
                      aliases=("me",)))
    registry.add(Spec("invite", "/invite <role>", "Invite someone (one-time code)", invite_cmd,
                      subcommands={**{r: r for r in ROLES.keys()}, **ROLES.aliases}))
    registry.add(Spec("join", "/join <code>", "Register with an invite code", join_cmd))


assert STRANGER_COMMANDS <= {"join", "help"}
