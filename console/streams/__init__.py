"""The console's live half: shared watches, log streams, exec sessions, port-forwards, pod files.

Domain modules: each knows a cluster only through ``console.resources.kubeapi`` (or the exec
channel adapter) and nothing of HTTP; the routes in ``console.http`` open the streams.
"""
