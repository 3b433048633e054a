"""``python -m branchbench``: the same commands as the ``branchbench`` script."""

import sys

from .cli import main

sys.exit(main())
