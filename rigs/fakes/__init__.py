"""Small local fakes of the chat platforms' HTTP APIs, for tests and benchmarks."""

# How long a test waits for a call the bot should make. A guard against a hang, not a
# timing check: CI runs the suite on three workers over two cores, where a card that takes
# 1 s alone has taken more than 5 s (test_migration_service_messages_..., stop 46).
PATIENCE_S = 15.0
