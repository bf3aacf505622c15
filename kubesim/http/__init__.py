"""The simulator's HTTP server: authentication, routing, reads, writes and watches, discovery and
OpenAPI, pod subresources (logs, exec, attach, port-forward over WebSocket and SPDY) and TLS."""
