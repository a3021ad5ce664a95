"""Martyn's Law (Terrorism (Protection of Premises) Act 2025): the enhanced-tier document of
public-protection procedures and measures, its revisions, the reminder to send it to the
regulator, and the drill log that evidences it."""
