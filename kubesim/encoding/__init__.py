"""What goes over the wire besides JSON: request bodies (JSON, YAML, protobuf), field validation
against the served schemas, and server-side printing (``Table`` responses, ``kubectl get`` columns)."""
