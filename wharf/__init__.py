"""The composition root: the ``wharf`` command and the literal table of the services it serves.

Nothing in ``common`` or in a service imports this package (an import-linter contract); it imports
each service statically, so mypy and import-linter see every edge.
"""
