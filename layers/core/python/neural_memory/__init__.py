"""Neural Memory: the shared layer (models, pipeline, providers, stores) used by every function."""

__version__ = "0.1.0"
