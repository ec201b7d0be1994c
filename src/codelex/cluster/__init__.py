"""Shards built and served on Ray (the ``ray`` extra: ray and fsspec), kept in a shard store at an fsspec URL.

``store`` (where shards live: layout, atomic writes, records and the manifest, untrusted reads),
``build`` (one shard per unit as Ray tasks: skipped when unchanged, retried, reported as units finish),
``serve`` (shards in actors placed by size, fan-out with global statistics under a deadline, shard
replacement) and ``ray_runtime`` (the one place Ray is imported).  Nothing here is imported by
``import codelex``: the cluster commands import it on first use.
"""
