"""Matchday Ops: the chat bot that runs football matchday safety operations."""
