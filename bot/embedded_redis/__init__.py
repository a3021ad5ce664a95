"""The embedded Redis server: a child process the bot supervises when no REDIS_URL is set
(a process supervisor, not data access: it talks to the server through bot.store.server_admin)."""
