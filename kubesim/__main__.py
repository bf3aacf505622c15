"""``python -m kubesim``: the same as ``wharf kubesim``."""

from kubesim.cli import main

raise SystemExit(main())
