"""HTTP routes of the results service: one ``web.RouteTableDef`` per domain, handlers kept thin."""
