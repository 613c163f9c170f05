"""wass-chat: the CLI, Slurm integration, analytics, reports and the LLM agent."""

__version__ = "0.1.0"
