"""Scheduled work: briefings, post-match summaries, escalations and retention sweeps."""
