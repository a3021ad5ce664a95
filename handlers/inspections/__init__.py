"""Inspections: pre-match checks and their findings."""
