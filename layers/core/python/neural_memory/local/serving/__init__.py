"""The local HTTP server in front of the very handlers Lambda runs, and what it runs beside them."""
