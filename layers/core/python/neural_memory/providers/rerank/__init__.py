"""Rerankers by mode: ``fast`` (none), ``balanced`` (Cohere), ``thorough`` (Cohere, then the LLM)."""
