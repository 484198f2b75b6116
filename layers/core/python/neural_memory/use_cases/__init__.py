"""The use cases ``Service`` hands its calls to, one module each: searching, answering, writing
(with its embedding and the chat turns' context), promotion, reading, deletion, the engineering
views (experts, lineage) and upkeep. Each states what it needs (the store port, the embedder, the
clock, settings) in its constructor, so it can be read and tested alone; ``service.py`` only wires
them. They sit between the composition root and the folders by role (search, ingest, engineering,
answer, stores): nothing below imports them back."""
