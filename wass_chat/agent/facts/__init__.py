"""The facts every answer rests on: plain functions and classes returning JSON-able dicts.

:class:`~.workflow_tools.WorkflowTools` answers from the simulator and the knowledge base
(placements with their counterfactuals, what-ifs, scheduler comparisons, similar cases and what
the best case's plan did differently), :class:`~.cluster_tools.ClusterTools` from Slurm and its
accounting (and plans the one gated action, submission), :class:`~.workload_tools.WorkloadTools`
from the cluster's workload replayed and its recorded energy. Also here: what a typed name
refers to (:mod:`.sources`), and the demo runs and demo knowledge base a fresh data home starts
with. Each kind's keys, verdict and rendering are its module's in :mod:`wass_chat.answers`.
"""
