"""The learned placement policy: GNN encoder + candidate scorer, trained with PPO in the
simulator and rewarded by the Knowledge-Guided Teacher (see docs/learned.md)."""
