"""The incident: its record, its card, its rules (merges, escalation re-plan) and its
escalation policy. Pure; the store runs the rules, handlers/incident/card.py renders the card."""
