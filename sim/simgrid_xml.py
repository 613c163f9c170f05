"""Export a platform as a SimGrid platform description (XML, DTD version 4.1).

One zone with full routing holds one host per node (``core`` cores of ``speed`` flop/s each),
a host for the shared filesystem, a split-duplex link per node NIC (so a node can send and
receive at full rate at once) and one shared link in front of the filesystem. Every route
crosses exactly two links, each carrying half the platform latency, so a route's latency is
``platform.latency``. Routes are symmetric: SimGrid derives the reverse route and swaps the
UP/DOWN halves of split-duplex links itself.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from sim.model import Platform
from sim.schedule import SHARED_FS

_HEADER = (
    "<?xml version='1.0'?>\n"
    '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
    '<platform version="4.1">\n'
)
FS_LINK = "shared-fs-link"


def nic_link(node_name: str) -> str:
    """Id of the split-duplex link of ``node_name``'s NIC."""
    return f"{node_name}-nic"


def to_simgrid_xml(platform: Platform) -> str:
    """The SimGrid XML text for ``platform`` (hosts, links, routes)."""
    half_latency = f"{platform.latency / 2!r}s"
    lines = [_HEADER, f'  <zone id={quoteattr(platform.name or "platform")} routing="Full">']
    for node in platform.nodes:
        lines.append(
            f'    <host id={quoteattr(node.name)} speed="{node.speed!r}f" core="{node.cores}">'
        )
        lines.append(f'      <prop id="memory" value="{node.memory}"/>')
        lines.append(f'      <prop id="gpus" value="{node.gpus}"/>')
        one_core = node.power_idle + (node.power_busy - node.power_idle) / node.cores
        lines.append(
            f'      <prop id="wattage_per_state" value="{node.power_idle!r}:'
            f'{one_core!r}:{node.power_busy!r}"/>'
        )
        lines.append("    </host>")
    lines.append(f'    <host id={quoteattr(SHARED_FS)} speed="1Gf"/>')
    for node in platform.nodes:
        lines.append(
            f'    <link id={quoteattr(nic_link(node.name))} bandwidth="{node.bandwidth!r}Bps"'
            f' latency="{half_latency}" sharing_policy="SPLITDUPLEX"/>'
        )
    lines.append(
        f'    <link id={quoteattr(FS_LINK)} bandwidth="{platform.shared_fs_bandwidth!r}Bps"'
        f' latency="{half_latency}"/>'
    )
    names = [n.name for n in platform.nodes]
    for i, src in enumerate(names):
        for dst in names[i + 1 :]:
            lines.append(
                f"    <route src={quoteattr(src)} dst={quoteattr(dst)}>"
                f'<link_ctn id={quoteattr(nic_link(src))} direction="UP"/>'
                f'<link_ctn id={quoteattr(nic_link(dst))} direction="DOWN"/></route>'
            )
    for dst in names:
        lines.append(
            f"    <route src={quoteattr(SHARED_FS)} dst={quoteattr(dst)}>"
            f"<link_ctn id={quoteattr(FS_LINK)}/>"
            f'<link_ctn id={quoteattr(nic_link(dst))} direction="DOWN"/></route>'
        )
    lines += ["  </zone>", "</platform>", ""]
    return "\n".join(line.rstrip("\n") for line in lines)
