"""Settings, read once from the environment and `.env`, validated at start-up."""

from __future__ import annotations

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
    tz: str = Field(default="Europe/London", alias="MATCHDAY_TZ")
    config_dir: Path = Field(default=PROJECT_CONFIG, alias="MATCHDAY_CONFIG_DIR")
    telegram_bot_token: SecretStr | None = Field(default=None, alias="TELEGRAM_BOT_TOKEN")
    telegram_base_url: str | None = Field(default=None, alias="TELEGRAM_BASE_URL")
    telegram_webhook_secret: SecretStr | None = Field(default=None, alias="TELEGRAM_WEBHOOK_SECRET")
    telegram_webhook_url: str | None = Field(default=None, alias="TELEGRAM_WEBHOOK_URL")
    slack_bot_token: SecretStr | None = Field(default=None, alias="SLACK_BOT_TOKEN")
    slack_app_token: SecretStr | None = Field(default=None, alias="SLACK_APP_TOKEN")
    slack_signing_secret: SecretStr | None = Field(default=None, alias="SLACK_SIGNING_SECRET")
    slack_api_url: str | None = Field(default=None, alias="SLACK_API_URL")
    port: int = Field(default=8080, alias="PORT")
    form_ttl_seconds: int = Field(default=600, alias="MATCHDAY_FORM_TTL")
    dedupe_ttl_seconds: int = Field(default=86400, alias="MATCHDAY_DEDUPE_TTL")
    delivery_warn_seconds: int = Field(default=60, alias="MATCHDAY_DELIVERY_WARN_S")

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
        if v and not v.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return v or None

    @property
    def zone(self) -> ZoneInfo:
        """The local time zone fixtures are announced in."""
        return ZoneInfo(self.tz)


def load_settings(**overrides: object) -> Settings:
    """Read and validate settings; raise SettingsError with one line per problem."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'/'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise SettingsError(f"bad settings: {problems}") from None
