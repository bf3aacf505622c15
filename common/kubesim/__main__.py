"""``python -m common.kubesim``: the same as ``wharf kubesim``."""

from common.kubesim.cli import main

raise SystemExit(main())
