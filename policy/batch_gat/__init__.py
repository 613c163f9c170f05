"""The learned job scheduler: graph attention over the pending queue and the partitions, an
actor-critic trained with PPO in the batch simulator (see docs/cluster-whatif.md)."""
