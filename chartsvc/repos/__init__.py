"""Chart repositories: Helm-compatible on-disk state, index download and preparation, chart lookup.

``config`` holds repositories.yaml, ``index`` turns a raw index into the compact prepared form,
``fetch`` downloads through the address guard, ``cache`` bounds what stays in memory and ``service``
ties them together for the routes, the chart domain and dependency resolution.
"""
