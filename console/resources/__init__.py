"""Console browsing domain: discovery-driven catalog, listing, projection, search, detail, overview."""
