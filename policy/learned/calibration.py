"""Retrieval in the learned policy under runtime uncertainty: what it plans on, what it meets.

Under uncertainty (:mod:`sim.uncertainty`) a scheduler plans on estimates and the simulator runs
the actual values. For one training or evaluation instance (an :class:`InstanceSpec`) and a
:class:`Setting`:

* the **actual** instance is the bench's realisation for the spec's seed
  (:func:`policy.planning_views.instance_views`), so training, evaluation and the bench draw
  from one model;
* the **no-RAG** policy plans on the user's requests, all a submitter knows;
* the **RAG** policy plans on what the retrieved past executions predict
  (:class:`~sim.uncertainty.RuntimePredictions`, computed by the knowledge base above this
  floor and handed down as data): each category's predicted runtime, each node class's slowdown,
  and each category's spread, which
  :class:`~policy.learned.instance_context.InstanceContext` turns into a candidate feature
  (:data:`~policy.learned.instance_context.SPREAD`).

``oracle`` is the exact setting the policy was always trained in: the nominal instance, planned
and run as it is (no realisation), so it reproduces the figures from before uncertainty.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from policy.learned.instance_context import Spreads
from policy.learned.instances import InstanceSpec, materialize
from policy.planning_views import instance_views
from sim.model import Platform, Task, Workflow
from sim.uncertainty import (
    RuntimePredictions,
    UncertaintyConfig,
    planning_platform,
    task_category,
)

SETTINGS: tuple[str, ...] = ("oracle", "user")
"""Estimate modes the learned policy trains and is evaluated under."""


@dataclass(frozen=True)
class Setting:
    """Under which estimates episodes run (``oracle``: the exact setting, no realisation)."""

    estimates: str = "oracle"
    noise: float = 1.0
    """Scale of the realised spreads (:meth:`UncertaintyConfig.scaled`)."""
    uncertainty_seed: int = 0

    @property
    def exact(self) -> bool:
        return self.estimates == "oracle"

    @property
    def config(self) -> UncertaintyConfig:
        return UncertaintyConfig(seed=self.uncertainty_seed).scaled(self.noise)


EXACT = Setting()


@dataclass(frozen=True)
class Planning:
    """What a policy plans one instance on: workflow, platform and retrieved spreads."""

    workflow: Workflow
    platform: Platform
    spreads: Spreads = ()


def calibrate(request: Workflow, platform: Platform, predictions: RuntimePredictions) -> Planning:
    """The user's ``request`` re-timed by retrieved ``predictions``.

    A task takes its own predicted runtime when earlier runs of this workflow were retrieved,
    else its category's; a category the history never saw keeps its request times the
    history's median actual/request ratio (as ``kb`` estimates do); nodes are slowed by their
    own predicted slowdown, else their class's. A category without a spread of its own
    gets the largest retrieved one (an unseen category is the least certain).
    """
    known = predictions.categories

    def work(t: Task) -> float:
        runtime = predictions.runtime_of(t)
        if runtime is None or t.runtime <= 0:
            return t.work * predictions.request_ratio
        return runtime * t.work / t.runtime

    tasks = tuple(replace(t, work=work(t)) for t in request.tasks)
    workflow = Workflow(request.name, tasks, request.files, request.description, request.meta)
    widest = max((p.log_spread for p in known.values()), default=0.0)
    spreads = tuple(sorted(_spread(predictions, ts, widest) for ts in _by_category(request)))
    return Planning(workflow, planning_platform(platform, predictions), spreads)


def _by_category(workflow: Workflow) -> list[tuple[Task, ...]]:
    """The workflow's tasks grouped by category."""
    groups: dict[str, list[Task]] = {}
    for t in workflow.tasks:
        groups.setdefault(task_category(t), []).append(t)
    return [tuple(g) for g in groups.values()]


def _spread(
    predictions: RuntimePredictions, tasks: tuple[Task, ...], widest: float
) -> tuple[str, float]:
    """A category's retrieved spread: the run-to-run one when earlier runs of this workflow
    predict every one of its tasks, else the category's, else ``widest``."""
    category = task_category(tasks[0])
    if predictions.runs and all(t.id in predictions.tasks for t in tasks):
        return category, predictions.task_log_spread
    known = predictions.categories.get(category)
    return category, known.log_spread if known is not None else widest


@lru_cache(maxsize=512)
def _views(spec: InstanceSpec, setting: Setting) -> tuple[Planning, tuple[Workflow, Platform]]:
    workflow, platform = materialize(spec)
    views = instance_views(
        workflow,
        platform,
        spec.seed,
        "user",
        setting.config,
    )
    return Planning(*views.planning), views.actual


def planning_view(
    spec: InstanceSpec, setting: Setting, predictions: RuntimePredictions | None = None
) -> Planning:
    """What the policy plans ``spec`` on: the nominal instance (exact), the user's requests
    (no retrieval), or the requests calibrated by the retrieved ``predictions``."""
    if setting.exact:
        return Planning(*materialize(spec))
    request = _views(spec, setting)[0]
    if predictions is None:
        return request
    return calibrate(request.workflow, request.platform, predictions)


def actual_instance(spec: InstanceSpec, setting: Setting) -> tuple[Workflow, Platform]:
    """What ``spec`` actually runs as under ``setting`` (the nominal instance when exact)."""
    if setting.exact:
        return materialize(spec)
    return _views(spec, setting)[1]
