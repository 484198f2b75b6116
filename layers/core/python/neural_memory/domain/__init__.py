"""The domain's basic rules, on the ground floor beside ``models/``: filters and their terms, tiers,
BM25's parameters, ids, chunking, references to code in text, and what the lifecycle sets on a
record. Everything above imports from here (stores and settings included); this imports nothing
of the package but ``models/``."""
