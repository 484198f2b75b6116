"""The audit trail: what was done to a workspace's memory, by which key, when (``trail.py``: the
entry, the query and the port), kept where the observations are: a table of the embedded store's
file (``sqlite.py``), an index beside each workspace's on OpenSearch (``opensearch.py``);
``factory.py`` gives a store its trail. Never content: ids and counts only."""
