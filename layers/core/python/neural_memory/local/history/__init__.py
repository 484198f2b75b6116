"""Bringing a team's history in: ``neural-memory import git|github|vercel`` (local only).

Every importer turns what it reads into the events the webhooks deliver (``events.py``), so the
same normalizers make the same observation ids: importing twice, or a webhook after an import,
updates instead of duplicating. A sink (``sink.py``) writes them to the embedded store or to a
deployed API.
"""
