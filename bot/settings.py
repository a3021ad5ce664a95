"""Settings, read once from the environment and `.env`, validated at start-up."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_CONFIG = Path(__file__).resolve().parent.parent / "config"


class SettingsError(ValueError):
    """A setting is missing or wrong; the message is one line for the operator."""


class Settings(BaseSettings):
    """Everything the bot reads from its environment."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    redis_url: str | None = Field(default=None, alias="REDIS_URL")
    data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("matchday")),
        alias="MATCHDAY_DATA_DIR",
    )
    appendfsync: str = Field(default="always", alias="MATCHDAY_APPENDFSYNC")
    # Refuse to start when Redis could lose a report already answered "Logged".
    require_durable: bool = Field(default=False, alias="MATCHDAY_REQUIRE_DURABLE")
    tz: str = Field(default="Europe/London", alias="MATCHDAY_TZ")
    config_dir: Path = Field(default=PROJECT_CONFIG, alias="MATCHDAY_CONFIG_DIR")
    telegram_bot_token: SecretStr | None = Field(default=None, alias="TELEGRAM_BOT_TOKEN")
    telegram_base_url: str | None = Field(default=None, alias="TELEGRAM_BASE_URL")
    telegram_webhook_secret: SecretStr | None = Field(default=None, alias="TELEGRAM_WEBHOOK_SECRET")
    telegram_webhook_url: str | None = Field(default=None, alias="TELEGRAM_WEBHOOK_URL")
    # A private channel/group the bot can post in: after a crash, a send left in doubt is
    # looked up by forwarding candidate messages there (Telegram bots can't read history).
    telegram_archive_chat: str | None = Field(default=None,
                                              alias="MATCHDAY_TELEGRAM_ARCHIVE_CHAT")
    slack_bot_token: SecretStr | None = Field(default=None, alias="SLACK_BOT_TOKEN")
    slack_app_token: SecretStr | None = Field(default=None, alias="SLACK_APP_TOKEN")
    slack_signing_secret: SecretStr | None = Field(default=None, alias="SLACK_SIGNING_SECRET")
    slack_api_url: str | None = Field(default=None, alias="SLACK_API_URL")
    # The turnstile feed's HMAC key (POST /ingress/batch); unset: the feed is refused.
    ingress_key: SecretStr | None = Field(default=None, alias="MATCHDAY_INGRESS_KEY")
    # The deployment's super-admin (a deployment of many clubs): a bearer token for
    # GET /deployment/health, each club's health and never any club's content; unset: refused.
    admin_token: SecretStr | None = Field(default=None, alias="MATCHDAY_ADMIN_TOKEN")
    # Hosts a command's response_url may point at (answers carry sign-in links); `*.x` is any
    # subdomain of x. GovSlack or tests add theirs.
    slack_response_hosts: str = Field(default="hooks.slack.com,*.slack.com",
                                      alias="SLACK_RESPONSE_HOSTS")
    port: int = Field(default=8080, alias="PORT")
    # The HTTP server's address: this machine only unless a deployment opens it (0.0.0.0).
    bind: str = Field(default="127.0.0.1", alias="MATCHDAY_BIND")
    form_ttl_seconds: int = Field(default=600, alias="MATCHDAY_FORM_TTL")
    # voice notes (the `.[voice]` extra): another CTranslate2 Whisper model directory than
    # the bundled tiny.en; worker processes; notes waiting beyond those; longest note
    stt_model: str = Field(default="", alias="MATCHDAY_STT_MODEL")
    stt_workers: int = Field(default=2, ge=1, le=16, alias="MATCHDAY_STT_WORKERS")
    stt_queue: int = Field(default=20, ge=0, le=1000, alias="MATCHDAY_STT_QUEUE")
    stt_max_seconds: int = Field(default=60, ge=1, le=600, alias="MATCHDAY_STT_MAX_SECONDS")
    dedupe_ttl_seconds: int = Field(default=86400, alias="MATCHDAY_DEDUPE_TTL")
    # Plain text joins the sender's latest report only this long after it (then /update <id>).
    note_window_seconds: int = Field(default=300, ge=1, le=86400, alias="MATCHDAY_NOTE_WINDOW")
    # control-room web view (bot/web): base of sign-in links, link and session lifetimes
    public_url: str | None = Field(default=None, alias="MATCHDAY_PUBLIC_URL")
    web_link_ttl_seconds: int = Field(default=300, ge=30, alias="MATCHDAY_WEB_LINK_TTL")
    web_session_ttl_seconds: int = Field(default=12 * 3600, ge=60,
                                         alias="MATCHDAY_WEB_SESSION_TTL")
    replica_acks: int | None = Field(default=None, ge=0, alias="MATCHDAY_REPLICA_ACKS")
    replica_timeout_ms: int = Field(default=500, ge=1, alias="MATCHDAY_REPLICA_TIMEOUT_MS")
    log_format: str = Field(default="text", alias="MATCHDAY_LOG_FORMAT")
    lease_ms: int = Field(default=10000, ge=1000, alias="MATCHDAY_LEASE_MS")
    delivery_warn_seconds: int = Field(default=60, alias="MATCHDAY_DELIVERY_WARN_S")
    # Drills and tests of several replicas: virtual time read from this file (FileClock).
    clock_file: Path | None = Field(default=None, alias="MATCHDAY_CLOCK_FILE")

    @field_validator("appendfsync")
    @classmethod
    def _fsync(cls, v: str) -> str:
        if v not in {"always", "everysec", "no"}:
            raise ValueError("must be always, everysec or no")
        return v

    @field_validator("tz")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {v!r}") from exc
        return v

    @field_validator("redis_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v:
            from bot.store.connect import parse_url

            parse_url(v)  # ValueError with one line
        return v or None

    @field_validator("slack_response_hosts")
    @classmethod
    def _response_hosts(cls, v: str) -> str:
        hosts = [h.strip().lower() for h in v.split(",") if h.strip()]
        if not hosts:
            raise ValueError("needs at least one host, e.g. hooks.slack.com")
        for h in hosts:
            if not re.fullmatch(r"(\*\.)?[a-z0-9.\-]+|\[[0-9a-f:]+\]", h) or h.startswith("*.."):
                raise ValueError(f"{h!r} is not a host name (hooks.slack.com, *.slack.com)")
        return ",".join(hosts)

    @property
    def response_hosts(self) -> tuple[str, ...]:
        """SLACK_RESPONSE_HOSTS as a tuple of host patterns."""
        return tuple(self.slack_response_hosts.split(","))

    @field_validator("public_url")
    @classmethod
    def _public(cls, v: str | None) -> str | None:
        if v and not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v.rstrip("/") if v else None

    @property
    def web_base(self) -> str:
        """Where the control-room web view is reached (MATCHDAY_PUBLIC_URL or this host)."""
        return self.public_url or f"http://127.0.0.1:{self.port}"

    @field_validator("bind")
    @classmethod
    def _bind(cls, v: str) -> str:
        try:
            ipaddress.ip_address(v)
        except ValueError:
            raise ValueError("must be an IP address, e.g. 127.0.0.1 or 0.0.0.0") from None
        return v

    @field_validator("replica_acks", mode="before")
    @classmethod
    def _acks(cls, v: object) -> object:
        return None if v in ("", "auto") else v

    @field_validator("log_format")
    @classmethod
    def _log_format(cls, v: str) -> str:
        if v not in {"text", "json"}:
            raise ValueError("must be text or json")
        return v

    @property
    def zone(self) -> ZoneInfo:
        """The local time zone fixtures are announced in."""
        return ZoneInfo(self.tz)


def secret_environment() -> Mapping[str, str]:
    """The process environment, where a club's `env:` secret references are looked up."""
    return os.environ


def load_settings(**overrides: object) -> Settings:
    """Read and validate settings; raise SettingsError with one line per problem."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'/'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise SettingsError(f"bad settings: {problems}") from None
