"""The patch and field-ownership engines: JSON, merge and strategic-merge patches, server-side apply
and managedFields. Pure functions on plain dicts; ``fields`` is the one seam the API core calls and
the one place their errors become ``Status`` errors."""
