"""The console's HTTP layer: one routes module per group, each with its own ``routes`` table."""
