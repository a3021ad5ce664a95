"""Telegram adapter (python-telegram-bot): the only package that imports telegram."""
