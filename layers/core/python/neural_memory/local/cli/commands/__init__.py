"""One module per command of ``neural-memory``: ``register``, its flags (``parser.py`` calls it), and
``cmd_<name>``, which runs it, importing what it needs when it runs."""
