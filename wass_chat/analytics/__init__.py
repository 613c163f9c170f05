"""Accounting analytics: period statistics, per-chart data, anomalies and insight texts.

Every number is a polars expression over the jobs table (or numpy over its columns): no Python
loop visits individual jobs. How each number is computed is stated in :mod:`.methods`.
"""
