"""Rigs the tests and the benchmarks share: fakes of the Telegram and Slack APIs, a real bot
process with both platforms, Redis topologies, the crash run. Importable from the repo root."""
