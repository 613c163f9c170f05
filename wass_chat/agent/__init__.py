"""The chat agent: LangChain on a local Ollama model, plus a deterministic offline mode."""
