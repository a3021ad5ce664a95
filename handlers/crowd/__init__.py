"""The crowd: early warnings."""
