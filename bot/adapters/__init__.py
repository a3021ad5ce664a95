"""Platform adapters: turn platform events into Commands and render Replies natively."""
