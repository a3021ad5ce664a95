"""The decision log: decisions and rationales, and their review reminders."""
