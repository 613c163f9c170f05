"""The whole-cluster what-if: the batch simulator (sim.batch) fed with the site's own data.

``cluster_source`` (the cluster inferred from the jobs seen, and the what-ifs' edits of it;
scontrol's own is read by ``wass_chat.slurm.scontrol_cluster``), ``sacct_workload`` (jobs
from the sacct cache), ``whatif`` (changes and their before/after figures), ``validation``
(a recorded stream run on the real cluster, then replayed). docs/cluster-whatif.md.
"""
