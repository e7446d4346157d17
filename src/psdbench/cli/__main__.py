"""``python -m psdbench.cli``: the ``psdbench`` command without its console script."""

import sys

from psdbench.cli.commands import main

sys.exit(main())
