"""The incident: report and log, its lifecycle commands, guided METHANE/HOT, its one
renderer (card.py) and its escalation timers."""
