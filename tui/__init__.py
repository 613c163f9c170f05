"""The Textual terminal app: chat with the scheduler, see schedules, approve submissions."""
