"""Shared by every home: the guided-form machinery, typed words, /status, the pack
and web sign-in."""
