"""The briefing: its cadence (config/briefings.toml) and the plan of slots a fixture derives
from it. Pure; handlers/briefings/briefing_content.py writes what a slot says."""
