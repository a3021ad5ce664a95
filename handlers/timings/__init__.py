"""Key timings of a fixture (gates open, kick-off, ...)."""
