"""The cluster's nodes (kind ``cluster``): the Markdown (the verdict is
:mod:`wass_chat.slurm.explain.nodes`').
"""

from __future__ import annotations

from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain
from wass_chat.slurm.advice import cpus
from wass_chat.slurm.explain.nodes import ClusterFacts, reservation_words
from wass_chat.slurm.explain.partitions import limits_sentence


def render_cluster(f: Facts) -> str:
    """The verdict, then each node (the asked one only, with its jobs; an asked partition's
    only): state in words, the admin's reason, CPUs and memory in use, then the partitions'
    limits and the reservations not yet over; the demo platform's nodes when Slurm does not
    answer."""
    lines = [f"**{plain(f['verdict'])}**", ""] if f.get("verdict") else []
    asked = f.get("partition")
    partitions = [p for p in f.get("partitions", []) if not asked or p["name"] == asked]
    nodes = [
        n
        for n in f["nodes"]
        if (not f.get("node") or n["name"] == f["node"])
        and (not asked or n["name"] in partitions[0]["node_names"])
    ]
    source = "`scontrol show nodes`" if f["source"] == "slurm" else lit(f["source"])
    lines.append(f"**Nodes** ({source}):")
    for n in nodes:
        if "condition" not in n:  # the demo platform's simulated nodes
            lines.append(f"- {lit(n['name'])}: {lit(n['state'])}, {n['cores']} cores")
            continue
        reason = (
            f' ("{lit(n["reason"])}"'
            + (f", {lit(n['reason_by'])} at {n['reason_since']})" if n["reason_by"] else ")")
            if n["reason"]
            else ""
        )
        parts = ", ".join(n["partitions"])
        memory = (
            f", {n['allocated_memory_mb']:,.0f} of {n['memory_mb']:,.0f} MB of memory"
            if n["memory_mb"]
            else ""
        )
        lines.append(
            f"- {lit(n['name'])}: {n['condition']}{reason}; {n['allocated_cores']} of "
            f"{n['cores']} CPUs{memory} in use"
            + (f"; partitions {lit(parts)}" if parts else "")
            + f" (state {lit(n['state'])})"
        )
        if f.get("node"):
            lines += [
                f"  - job {lit(j['job_id'])} of {lit(j['user'])}: {cpus(j['cpus'])}"
                + (f", time limit ends about {j['ends']}" if j["ends"] else ", no time limit")
                for j in n["jobs"]
            ]
    if partitions and not f.get("node"):
        lines += ["", "**Partitions** (`scontrol show partitions`):"]
        lines += [
            f"- {lit(p['name'])}{' (default)' * p['default']}: {p['state']}; "
            f"{lit(p['nodes'] or 'no nodes')}, {p['allocated_cpus']} of {p['cpus']} CPUs in use. "
            f"{limits_sentence(p, lit)}"
            for p in partitions
        ]
    if f["source"] == "slurm":
        lines += ["", "**Reservations** (`scontrol show reservations`):"]
        shown = {n["name"] for n in nodes}  # one node's or partition's: those on its nodes
        reserved = [
            r
            for r in f.get("reservations", [])
            if not (f.get("node") or asked) or shown & set(r["nodes"])
        ]
        lines += [f"- {reservation_words(r, lit)}" for r in reserved] or ["- none"]
    if (licences := f.get("licences")) and not f.get("node"):
        lines += ["", "**Licences** (`scontrol show licenses`):"]
        lines += [
            f"- {lit(x['name'])}: {x['used']} of {x['total']} in use, {x['free']} free"
            for x in licences
        ]
    return "\n".join(lines)


KIND = Kind(
    "cluster",
    "each node's state, its admin's reason and CPUs in use (one node: its jobs)",
    render_cluster,
    facts=ClusterFacts,
)
