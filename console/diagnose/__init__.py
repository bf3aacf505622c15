"""Diagnosis: deterministic findings with evidence, the optional LLM summary, and remediations.

``snapshot`` reads what a diagnosis needs from one cluster (one list per kind, concurrently, plus a
previous-log excerpt per crashing workload); ``analyzers`` turns it into :class:`Finding` values
without I/O, so the same cluster state always gives the same findings; ``summary`` asks a model
about redacted findings, only when a caller pays for it; ``remediations`` proposes, previews and
applies fixes tied to findings. Nothing here knows HTTP.
"""
