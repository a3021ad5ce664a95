"""Voice notes transcribed on the bot's own machine (the optional `.[voice]` extra):
a bounded worker process pool, the ground's vocabulary as the model's prompt, and
suggested type/place/severity from what was said."""
