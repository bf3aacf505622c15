"""chartsvc."""
