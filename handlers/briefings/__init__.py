"""Briefings: what is sent before and during a match, on demand."""
