"""One module per command of ``neural-memory`` (``cmd_<name>``), each importing what it needs when it runs."""
