"""Scheduled work: the scheduler (briefing, summary and home-planned slots), the deadline
sweep the homes fire through, early warning and retention sweeps."""
