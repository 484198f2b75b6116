"""What only a developer's machine runs: evaluation of retrieval on datasets and real histories."""
