"""The incident: its record, its card, its rules (merges, escalation re-plan) and its
escalation policy. Pure; the store runs the rules, handlers/display.py renders the card."""
