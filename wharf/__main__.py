"""``python -m wharf``: the same as the ``wharf`` console script."""

import sys

from wharf.entry import main

sys.exit(main())
