"""Batch (job-queue) simulation of a whole cluster: the site's workload under other policies.

``model`` (nodes, partitions, the columnar workload), ``config`` (scheduler, priority, power),
``engine`` (the event loop: main scheduler, backfill, power saving), ``energy`` (per-node-type
power model), ``metrics`` (waits, utilisation, makespan), ``swf`` (Standard Workload Format
traces), ``learn`` (the cross-entropy queue order), ``chosen`` (the hook a learned chooser
drives), ``check`` (is a schedule possible). docs/cluster-whatif.md has the long form.
"""
