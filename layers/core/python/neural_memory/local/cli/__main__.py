"""``python -m neural_memory.local.cli``."""

import sys

from neural_memory.local.cli import main

sys.exit(main())
