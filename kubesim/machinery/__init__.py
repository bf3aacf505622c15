"""Value types every layer of the simulator shares: ``Status`` errors, write options and the clock,
quantities, label/field selectors, JSONPath, the served resource types (``registry``) and the
cluster's timings. Nothing here holds cluster state or imports another part of the simulator."""
