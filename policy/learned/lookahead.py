"""One-step lookahead over the learned policy: the expert of expert iteration, and a planner.

:class:`LookaheadPolicy` places each ready task by trying the network's ``k`` best nodes for it:
for every candidate it fixes the decisions taken so far plus that candidate, completes the
schedule with the greedy network, replays the realised static plan (what Slurm would run) and
keeps the candidate with the shortest makespan; a tie keeps the network's own choice. This is
Bertsekas' rollout algorithm with the greedy network as the base policy: with ties resolved
towards the base, the result is never worse than the greedy rollout it improves on, and every
decision gets an exact counterfactual answer from the simulator (per-decision credit, where
PPO's terminal reward is spread over 50-200 decisions).

Training imitates it (expert iteration, Anthony et al. 2017: the network learns to reproduce
the search's choices without the search, then the improved network is the next search's base);
``policy-lookahead`` runs it at planning time. Each candidate's rollout continues a copy of
the running simulation from the decision (:func:`sim.fork.continue_from`) rather than
re-simulating from t=0, the greedy candidate's completion is the rollout kept at the previous
decision, and the rollouts' greedy decisions are taken inside the compiled core wherever it is
certain to agree with the network (:mod:`policy.learned.compiled_head`), by an exact fast head
sharing the encoding otherwise: the plans are those of the from-scratch search (tested), still
quadratic in the task count (``wass-chat train bench`` times a 200-task plan). Measured: the
network imitates it poorly (docs/learned.md), so the search is worth running at planning time.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F

from policy.learned.agent import LearnedPolicy
from policy.learned.compiled_head import compiled_chooser
from policy.learned.features import candidate_features
from policy.learned.instance_context import CANDIDATE_FEATURES, PRIOR_COST_TO_GO, PRIOR_GAP, Spreads
from policy.learned.instances import InstanceSpec, materialize
from policy.learned.model import PolicyNet
from policy.learned.net_config import NetConfig
from policy.learned.planner import LearnedPlanner
from policy.learned.rollout import Episode, reference_makespan, replayed_makespan
from sim import fast
from sim.errors import InputError
from sim.fork import Rollout, continue_from
from sim.model import Platform, Workflow, check_fits
from sim.occupancy import Occupancy
from sim.schedule import ClusterView, NetworkModel, StaticSchedule

MAX_TASKS = 400
"""Largest workflow ``policy-lookahead`` plans: its cost grows with the square of the task count
(k simulations of the whole workflow per task), so far larger plans would take many minutes."""
DEFAULT_K = 3
"""Candidates tried per decision (a choice, not tuned: every figure in docs/learned.md uses 3);
the cost grows linearly with it."""


class _Prefix(LearnedPolicy):
    """The greedy network, except that the tasks in ``fixed`` go where it says."""

    def __init__(self, net: PolicyNet, fixed: dict[str, str], spreads: Spreads = ()) -> None:
        super().__init__(net, mode="greedy", spreads=spreads)
        self.fixed = fixed

    def choose_node(self, task: str, view: ClusterView) -> str:
        node = self.fixed.get(task)
        if node is None:
            return super().choose_node(task, view)
        self._placed += 1
        return node


class _GreedyHead:
    """The greedy network's decision, bit for bit, at a fraction of the per-call cost.

    :meth:`PolicyNet.logits` builds ``[task emb, node emb, features]`` with ``torch.cat`` and
    runs the head through ``nn.Module`` calls; the two matrix products are the only steps whose
    rounding depends on the library. Here they are the very same ``F.linear`` calls on a tensor
    of the same shape, layout and values (a reused buffer), and the prior, the subtraction and
    the mask are float32 element-wise operations, which round identically in NumPy. The argmax
    takes the first maximum, as ``torch.argmax`` does: the decisions are the network's.
    """

    def __init__(self, net: PolicyNet, emb: dict[str, torch.Tensor]) -> None:
        h = net.cfg.hidden
        self.task_emb = emb["task"].numpy()
        nodes = emb["compute"].numpy()
        self.buffer = np.empty((1, nodes.shape[0], 2 * h + CANDIDATE_FEATURES), np.float32)
        self.buffer[0, :, h : 2 * h] = nodes
        self.input = torch.from_numpy(self.buffer)
        self.h = h
        first, last = net.head[0], net.head[2]
        # Detached: the same values and kernels, without autograd bookkeeping per call.
        self.w1, self.b1 = first.weight.detach(), first.bias.detach()
        self.w2, self.b2 = last.weight.detach(), last.bias.detach()
        self.eft_prior = np.float32(net.eft_prior.item())
        self.lookahead_weight = np.float32(net.lookahead_weight.item())

    def choose(self, t_idx: int, feats: np.ndarray, mask: np.ndarray) -> int:
        h, buffer = self.h, self.buffer
        buffer[0, :, :h] = self.task_emb[t_idx]
        buffer[0, :, 2 * h :] = feats
        raw = F.linear(torch.relu(F.linear(self.input, self.w1, self.b1)), self.w2, self.b2)
        prior = self.eft_prior * (
            feats[:, PRIOR_GAP] + self.lookahead_weight * feats[:, PRIOR_COST_TO_GO]
        )
        logits = raw.numpy()[0, :, 0] - prior
        logits[~mask] = np.finfo(np.float32).min
        return int(np.argmax(logits))


class _Continuation(LearnedPolicy):
    """The base policy of a forked rollout: ``task`` on ``node``, then the greedy network.

    Shares the lookahead's instance context, embeddings and head instead of encoding the
    workflow again (the encoding is a function of the instance and the weights only).
    """

    def __init__(self, parent: LookaheadPolicy, task: str, node: str) -> None:
        super().__init__(parent.net, mode="greedy", spreads=parent.spreads)
        self.parent, self.task, self.node = parent, task, node

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self._ctx, self._emb = self.parent._ctx, self.parent._emb
        self._placed = self.parent._placed

    def choose_node(self, task: str, view: ClusterView) -> str:
        self._placed += 1
        if task == self.task:
            return self.node
        self.parent.asked += 1
        ctx = self.context
        feats, mask = candidate_features(ctx, task, view)
        action = self.parent.head.choose(ctx.task_index[task], feats, mask)
        return ctx.platform.nodes[action].name


class LookaheadPolicy(LearnedPolicy):
    """Rollout improvement of the greedy network; records its choices as imitation labels.

    The trajectory holds one row per decision: ``actions`` is the chosen (expert) node and
    ``best`` every candidate that tied for the shortest completion, the imitation target
    (:func:`policy.learned.imitation.imitation_loss`).
    """

    name: str = "policy-lookahead"

    def __init__(
        self,
        net: PolicyNet,
        workflow: Workflow,
        platform: Platform,
        network_model: NetworkModel = "fair",
        k: int = DEFAULT_K,
        occupancy: Occupancy | None = None,
        spreads: Spreads = (),
    ) -> None:
        super().__init__(net, mode="greedy", spreads=spreads)
        self.workflow, self.platform = workflow, platform
        self.network_model: NetworkModel = network_model
        self.k = k
        self.occupancy = occupancy
        """Other jobs' holds the plan starts from: the run this policy decides in must start
        from them too (its forks copy them; the from-scratch reference replays with them)."""
        self.decided: dict[str, str] = {}
        self.simulations = 0
        self.changed = 0
        """Decisions where the lookahead overruled the network's greedy choice."""
        self.fork = True
        """Continue a copy of the running simulation for each candidate (exact, fast); False
        re-simulates every candidate from t=0 with the decisions so far pinned (the reference
        the fork is tested against)."""
        self._base: tuple[Rollout, float] | None = None
        """The rollout of the decisions so far followed by the greedy network, and its replayed
        makespan: its node for the next task is the greedy choice there, whose completion it is."""
        self.compiled = True
        """Let the compiled core take the rollouts' greedy decisions where it is certain to
        agree with the network (:mod:`policy.learned.compiled_head`); False asks the network
        for every one (the reference the compiled decisions are tested against)."""
        self.chooser: Any = None
        self.asked = 0
        """Rollout decisions taken by the network in Python (all of them without the chooser;
        with it, those where its float64 head could not be sure of torch's argmax)."""
        self.head: _GreedyHead

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        super().reset(workflow, platform)
        self.decided = {}
        self._base = None
        self.head = _GreedyHead(self.net, self._emb)
        self.chooser = None
        if self.compiled and fast.enabled():
            ctx = self.context
            self.chooser = compiled_chooser(ctx, self.net, self._emb, ctx.upward)

    def _completion(self, task: str, action: int, view: ClusterView) -> float:
        """Replayed makespan of the decisions so far, ``task`` on ``action``, then greedy."""
        node = self.context.platform.nodes[action].name
        base = self._base
        if base is not None and base[0].node(task) == node:
            return base[1]  # the greedy continuation already made this choice
        self.simulations += 1
        if not self.fork or getattr(view, "run", None) is None:
            fixed = {**self.decided, task: node}
            prefix = _Prefix(self.net, fixed, self.spreads)
            return replayed_makespan(
                self.workflow, self.platform, prefix, self.network_model, self.occupancy
            )[0]
        pinned = (self.context.task_index[task], action)
        rollout = continue_from(view, _Continuation(self, task, node), self.chooser, pinned)
        span = rollout.replayed_makespan()
        self._rollouts[action] = (rollout, span)
        return span

    def _keep_base(self, task: str, choice: int) -> None:
        """After deciding ``task``: the rollout that continues the decisions now taken."""
        node = self.context.platform.nodes[choice].name
        if self._base is not None and self._base[0].node(task) == node:
            return
        self._base = self._rollouts.get(choice)

    def choose_node(self, task: str, view: ClusterView) -> str:
        ctx = self.context
        feats, mask = candidate_features(ctx, task, view)
        t_idx = ctx.task_index[task]
        with torch.no_grad():
            inputs = self.net.candidate_inputs(
                self._emb, torch.tensor([t_idx]), torch.from_numpy(feats).unsqueeze(0)
            )
            logits = self.net.logits(inputs, torch.from_numpy(mask).unsqueeze(0))[0]
        ranked = [int(i) for i in torch.argsort(logits, descending=True) if mask[int(i)]]
        candidates = ranked[: self.k]
        choice = candidates[0]
        best = np.zeros(len(mask), dtype=bool)
        best[choice] = True
        self._rollouts: dict[int, tuple[Rollout, float]] = {}
        if len(candidates) > 1:
            spans = [self._completion(task, action, view) for action in candidates]
            shortest = min(spans)
            if shortest < spans[0] * (1 - 1e-9):  # strictly better, or keep the network's choice
                choice = candidates[spans.index(shortest)]
            for action, span in zip(candidates, spans, strict=True):
                best[action] = span <= shortest * (1 + 1e-9)
        self.changed += choice != candidates[0]
        if self.fork:
            self._keep_base(task, choice)
        tr = self.trajectory
        tr.best.append(best)
        tr.task_idx.append(t_idx)
        tr.feats.append(feats)
        tr.masks.append(mask)
        tr.actions.append(choice)
        tr.logps.append(0.0)
        tr.values.append(0.0)
        tr.progress.append(self._placed / len(ctx.workflow.tasks))
        tr.rewards.append(0.0)
        node = ctx.platform.nodes[choice].name
        self.decided[task] = node
        self._placed += 1
        return node


def lookahead_episode(
    net: PolicyNet, spec: InstanceSpec, network_model: NetworkModel, k: int = DEFAULT_K
) -> Episode:
    """The expert's episode on ``spec``: its labelled decisions and its replayed makespan."""
    workflow, platform = materialize(spec)
    expert = LookaheadPolicy(net, workflow, platform, network_model, k)
    makespan, _ = replayed_makespan(workflow, platform, expert, network_model)
    return Episode(spec, expert.trajectory, makespan, reference_makespan(spec, network_model))


def _worker(
    state: dict[str, Any],
    cfg: NetConfig,
    specs: Sequence[InstanceSpec],
    network_model: NetworkModel,
    k: int,
) -> list[Episode]:
    torch.set_num_threads(1)
    net = PolicyNet(cfg)
    net.load_state_dict(state)
    net.eval()
    return [lookahead_episode(net, spec, network_model, k) for spec in specs]


def collect_lookahead(
    net: PolicyNet,
    specs: Sequence[InstanceSpec],
    network_model: NetworkModel,
    pool: ProcessPoolExecutor | None,
    k: int = DEFAULT_K,
    workers: int = 2,
) -> list[Episode]:
    """Expert episodes on ``specs``, spread over ``workers`` pool processes (or in process)."""
    net.eval()
    if pool is None or len(specs) < 2:
        return [lookahead_episode(net, spec, network_model, k) for spec in specs]
    state = {key: v.detach().clone() for key, v in net.state_dict().items()}
    # Interleave, so each worker gets a mix of sizes (cost grows with tasks x decisions).
    chunks = [list(specs[i::workers]) for i in range(workers)]
    futures = [
        pool.submit(_worker, state, net.cfg, chunk, network_model, k) for chunk in chunks if chunk
    ]
    return [ep for f in futures for ep in f.result()]


class LookaheadPlanner(LearnedPlanner):
    """The learned policy with a one-step lookahead at planning time (``policy-lookahead``).

    Never worse than the greedy ``policy`` on the simulator's account of the instance and of
    the load it starts from (an :class:`~sim.occupancy.Occupancy`: the rollouts fork the run
    that starts from its holds, and replay from them); costs ``k`` simulations per decision.
    Given retrieved predictions (:meth:`with_predictions`) it plans, searches and replays on
    what ``policy`` plans on (:meth:`LearnedPlanner.planning_inputs`: the requests re-timed by
    them), and the spreads reach the network's candidate features in every rollout (the
    shipped checkpoints weigh that column zero, so today only the re-timing changes plans).
    """

    name: str = "policy-lookahead"
    description: ClassVar[str] = "learned policy + one-step rollout lookahead (3 candidates)"

    def __init__(
        self,
        network_model: NetworkModel = "fair",
        checkpoint: str | Path | None = None,
        k: int = DEFAULT_K,
    ) -> None:
        super().__init__(network_model, checkpoint)
        self.k = k

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        check_fits(workflow, platform)
        if len(workflow.tasks) > MAX_TASKS:
            raise InputError(
                workflow.name,
                [
                    f"policy-lookahead plans at most {MAX_TASKS} tasks (this one has "
                    f"{len(workflow.tasks)}; its cost grows with the square of the task count): "
                    "use policy or rag-guarded"
                ],
            )
        workflow, platform, spreads = self.planning_inputs(workflow, platform)
        expert = LookaheadPolicy(
            self.net, workflow, platform, self.network_model, self.k, occupancy, spreads
        )
        makespan, plan = replayed_makespan(
            workflow, platform, expert, self.network_model, occupancy
        )
        return StaticSchedule(plan.assignment, plan.order, self.name, makespan)


LOOKAHEAD_TARGET_S = 2.0
"""Issue #18's goal for planning a 200-task workflow with ``policy-lookahead``."""


def time_plan(
    net: PolicyNet, workflow: Workflow, platform: Platform, network_model: NetworkModel = "fair"
) -> dict[str, float | int]:
    """Wall and CPU seconds of one ``policy-lookahead`` plan (``wass-chat train bench``)."""
    import time

    torch.set_num_threads(1)
    expert = LookaheadPolicy(net, workflow, platform, network_model)
    start, start_cpu = time.perf_counter(), time.process_time()
    makespan, _ = replayed_makespan(workflow, platform, expert, network_model)
    return {
        "lookahead_s": time.perf_counter() - start,
        "lookahead_cpu_s": time.process_time() - start_cpu,
        "lookahead_makespan": makespan,
        "lookahead_simulations": expert.simulations,
        "lookahead_target_s": LOOKAHEAD_TARGET_S,
    }
