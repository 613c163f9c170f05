"""Prioritized experience replay for the DQN (Schaul, Quan, Antonoglou and Silver, "Prioritized
Experience Replay", ICLR 2016), proportional variant.

Transition ``i`` is stored with priority ``p_i = (|delta_i| + eps) ** alpha`` (``delta_i`` its
last TD error; a new transition gets the largest priority so far, so it is replayed at least
once) and drawn with probability ``P(i) = p_i / sum_k p_k``. Sampling is stratified (one draw in
each of ``batch`` equal slices of the total) over a sum tree, so a draw costs ``O(log n)``. The
bias of sampling by priority is corrected by importance weights ``w_i = (n P(i)) ** -beta``,
divided by the largest weight any stored transition could get (so weights are at most 1);
``beta`` anneals towards 1 during training.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Transition:
    """One decision of an episode: state, action, reward, next state (or the end)."""

    episode: int
    """Which episode's graph the task indices refer to (the replay's caller keeps them)."""
    task: int
    feats: np.ndarray
    """(nodes, features) candidate features at the decision."""
    mask: np.ndarray
    """(nodes,) valid candidates."""
    action: int
    reward: float
    next_task: int
    next_feats: np.ndarray
    next_mask: np.ndarray
    done: bool
    """The last decision of the episode: no next state, the target is the reward alone."""


class SumTree:
    """Priorities in the leaves of a complete binary tree whose nodes hold their subtree's sum."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.tree = np.zeros(2 * capacity, dtype=np.float64)

    @property
    def total(self) -> float:
        return float(self.tree[1])

    def leaves(self, count: int) -> np.ndarray:
        return self.tree[self.capacity : self.capacity + count]

    def update(self, index: int, priority: float) -> None:
        node = index + self.capacity
        self.tree[node] = priority
        node //= 2
        while node:
            self.tree[node] = self.tree[2 * node] + self.tree[2 * node + 1]
            node //= 2

    def find(self, prefix: float) -> int:
        """The leaf where the running sum of priorities passes ``prefix``."""
        node = 1
        while node < self.capacity:
            left = 2 * node
            if prefix < self.tree[left] or self.tree[left + 1] == 0.0:
                node = left
            else:
                prefix -= self.tree[left]
                node = left + 1
        return node - self.capacity


class PrioritizedReplay:
    """A ring buffer of transitions drawn in proportion to their priorities."""

    def __init__(self, capacity: int, alpha: float = 0.6, eps: float = 1e-3) -> None:
        if capacity < 1 or alpha < 0 or eps <= 0:
            raise ValueError("need capacity >= 1, alpha >= 0 and eps > 0")
        self.capacity, self.alpha, self.eps = capacity, alpha, eps
        self.tree = SumTree(capacity)
        self.items: list[Transition | None] = [None] * capacity
        self.next = 0
        self.size = 0
        self.max_priority = 1.0
        self.per_episode: dict[int, int] = {}
        """Episode -> transitions of it stored (its graph is needed while any remain)."""

    def __len__(self) -> int:
        return self.size

    def add(self, transition: Transition) -> Transition | None:
        """Store ``transition`` with the largest priority so far; returns the oldest one it
        overwrote, if the buffer was full."""
        evicted = self.items[self.next]
        if evicted is not None:
            self.per_episode[evicted.episode] -= 1
            if not self.per_episode[evicted.episode]:
                del self.per_episode[evicted.episode]
        self.per_episode[transition.episode] = self.per_episode.get(transition.episode, 0) + 1
        self.items[self.next] = transition
        self.tree.update(self.next, self.max_priority)
        self.next = (self.next + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)
        return evicted

    def holds_episode(self, episode: int) -> bool:
        """Whether any transition of ``episode`` is still stored."""
        return episode in self.per_episode

    def probabilities(self) -> np.ndarray:
        """P(i) of every stored transition, in storage order."""
        return self.tree.leaves(self.size) / self.tree.total

    def sample(
        self, batch: int, beta: float, rng: np.random.Generator
    ) -> tuple[np.ndarray, list[Transition], np.ndarray]:
        """``batch`` stratified draws: (indices, transitions, importance weights)."""
        if self.size == 0:
            raise ValueError("sampling from an empty replay buffer")
        total = self.tree.total
        slices = (np.arange(batch) + rng.random(batch)) * (total / batch)
        indices = np.array([min(self.tree.find(u), self.size - 1) for u in slices])
        probs = self.tree.leaves(self.size)[indices] / total
        smallest = float(self.tree.leaves(self.size).min()) / total
        weights = (self.size * probs) ** -beta / (self.size * smallest) ** -beta
        items = [self.items[i] for i in indices]
        assert all(t is not None for t in items)
        return indices, items, weights.astype(np.float32)  # type: ignore[return-value]

    def update_priorities(self, indices: np.ndarray, td_errors: np.ndarray) -> None:
        """New priorities ``(|delta| + eps) ** alpha`` for the transitions just replayed."""
        priorities = (np.abs(td_errors) + self.eps) ** self.alpha
        for index, priority in zip(indices, priorities, strict=True):
            self.tree.update(int(index), float(priority))
        self.max_priority = max(self.max_priority, float(priorities.max()))
