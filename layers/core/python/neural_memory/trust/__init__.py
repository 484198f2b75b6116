"""Who wrote a memory and how far they are trusted (``team``), instruction-like text found in it
(``instructions``), and what of it may reach a model (``relay``)."""
