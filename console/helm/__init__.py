"""Helm for the console: releases on any registered cluster, the chart library, the values library.

One implementation, several doors: releases go through chartsvc's :class:`ReleaseService` and Helm
adapter, charts through chartsvc's library (``chartsvc.library``), so a release the console
installs is Helm's own record, readable by the ``helm`` CLI and by chartsvc. This package only
picks the cluster per request (:mod:`console.helm.desk`), keeps the values library
(:mod:`console.helm.values`) and states failures in the console's terms. It knows no HTTP.
"""
