"""Slack adapter (slack-bolt): the only package that imports slack_bolt and slack_sdk."""
