"""The whole-cluster what-if: the batch simulator (sim.batch) fed with the site's own data.

``cluster_source`` (the cluster from scontrol, slurm.conf, a platform file, or the jobs
seen), ``sacct_workload`` (jobs from the sacct cache), ``whatif`` (changes and their
before/after figures), ``validation`` (a recorded stream run on the real cluster, then
replayed). docs/cluster-whatif.md.
"""
