"""``python -m wharf``: the same as the ``wharf`` console script."""

import sys

from wharf.cli import main

sys.exit(main())
