"""Delivery: getting what the bot says to every chat, inside each platform's limits."""
