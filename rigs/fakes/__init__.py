"""Small local fakes of the chat platforms' HTTP APIs, for tests and benchmarks."""
