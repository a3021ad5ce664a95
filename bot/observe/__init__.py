"""Watching the bot run: Prometheus metrics, /healthz, structured logs."""
