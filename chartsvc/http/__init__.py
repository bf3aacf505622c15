"""The REST door: routes built from the spec's operations (``routes``), each running the operation's
call from ``chartsvc.calls``; multipart reading (``forms``) and the upload budget (``budget``)."""
