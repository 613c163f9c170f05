"""Knowledge base of past executions: Chroma-backed storage, embeddings, retrieval, curation."""
