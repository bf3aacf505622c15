"""The simulator's controllers: asyncio tasks that react to watches and reconcile workloads into pods."""
