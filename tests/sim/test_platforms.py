"""Platform files, units, the cluster generator, the demo assets and SimGrid export."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sim.demo import demo_platform, demo_workflow, demo_workflow_names, resolve_platform
from sim.errors import InputError, PlatformError
from sim.model import check_fits
from sim.platforms import (
    ClusterSpec,
    dumps_platform,
    generate_platform,
    load_platform,
    loads_platform,
    save_platform,
)
from sim.simgrid_xml import to_simgrid_xml
from sim.units import parse_quantity
from tests.support import require


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("10Gbps", "bandwidth", 1.25e9),
        ("1.25GBps", "bandwidth", 1.25e9),
        ("100MB/s", "bandwidth", 1e8),
        ("64GiB", "size", 64 * 2**30),
        ("500MB", "size", 5e8),
        ("2.5Gf", "speed", 2.5e9),
        ("10us", "time", 1e-5),
        ("3", "time", 3.0),
        (7, "size", 7.0),
    ],
)
def test_units(text: object, kind: str, value: float) -> None:
    assert parse_quantity(text, kind) == value  # type: ignore[arg-type]


def test_platform_file_with_units_and_node_groups() -> None:
    platform = loads_platform(
        textwrap.dedent("""
        name: lab
        latency: 50us
        shared_fs_bandwidth: 1GBps
        nodes:
          - {name: big, cores: 32, speed: 3Gf, memory: 256GiB, gpus: 2, bandwidth: 100Gbps}
          - {name: small, count: 3, cores: 4, memory: 8GiB}
    """)
    )
    assert platform.node_names == ("big", "small01", "small02", "small03")
    assert platform.latency == 5e-5
    assert platform.nodes[0].bandwidth == 12.5e9
    assert platform.nodes[1].memory == 8 * 2**30


def test_every_platform_problem_is_reported_naming_the_node() -> None:
    with pytest.raises(PlatformError) as info:
        loads_platform(
            textwrap.dedent("""
            name: broken
            latncy: 1ms
            nodes:
              - {name: a, cores: -2}
              - {name: b, cores: 4, bandwidth: 0Gbps}
              - {name: c, cores: 4, speed: fast, colour: red}
        """),
            subject="broken.yaml",
        )
    text = " | ".join(info.value.problems)
    assert info.value.subject == "broken.yaml"
    assert "platform: unknown key 'latncy'" in text
    assert "node 'c': unknown key 'colour'" in text
    assert "node 'c': 'speed': cannot read 'fast' as a speed" in text
    assert "node 'a' has -2 cores" in text
    assert "node 'b' has non-positive bandwidth 0.0" in text


def test_malformed_platform_files() -> None:
    with pytest.raises(PlatformError, match="malformed YAML"):
        loads_platform("nodes: [")
    with pytest.raises(PlatformError, match="malformed JSON"):
        loads_platform("{", is_json=True)
    with pytest.raises(PlatformError, match="top level must be a mapping"):
        loads_platform("- 1")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_save_then_load_is_identity(tmp_path: Path, suffix: str) -> None:
    platform = generate_platform(ClusterSpec(nodes=16, heterogeneous=True), seed=3)
    path = tmp_path / f"p{suffix}"
    save_platform(platform, path)
    assert load_platform(path) == platform
    if suffix == ".json":
        assert json.loads(path.read_text())["name"] == platform.name


@pytest.mark.parametrize("nodes", [4, 32, 128])
def test_generated_clusters(nodes: int) -> None:
    homo = generate_platform(ClusterSpec(nodes=nodes), seed=0)
    hetero = generate_platform(ClusterSpec(nodes=nodes, heterogeneous=True), seed=0)
    assert len(homo) == len(hetero) == nodes
    assert len({(n.speed, n.cores) for n in homo.nodes}) == 1
    assert len({n.speed for n in hetero.nodes}) > 1
    assert any(n.gpus for n in hetero.nodes) and not any(n.gpus for n in homo.nodes)
    assert all(1.5e9 <= n.speed <= 3.5e9 for n in hetero.nodes)
    assert generate_platform(ClusterSpec(nodes=nodes, heterogeneous=True), seed=0) == hetero


def test_generator_refuses_sizes_outside_4_to_128() -> None:
    with pytest.raises(InputError, match=r"nodes must be in 4\.\.128, got 200"):
        generate_platform(ClusterSpec(nodes=200))


def test_demo_assets_load_and_fit_the_demo_platform() -> None:
    platform = demo_platform()
    assert len(platform) == 8
    assert {n.cores for n in platform.nodes} >= {4, 32}
    assert 1 <= sum(1 for n in platform.nodes if n.gpus) <= 2
    assert resolve_platform(None) is platform
    sizes = {name: len(demo_workflow(name)) for name in demo_workflow_names()}
    assert sizes["genomics-49"] == 49 and sizes["fork-join-20"] == 20
    assert 50 <= sizes["montage-60"] <= 60 and 45 <= sizes["epigenomics-50"] <= 55
    for name in demo_workflow_names():
        check_fits(demo_workflow(name), platform)
    with pytest.raises(InputError, match="no demo workflow 'nope'"):
        demo_workflow("nope")


def test_simgrid_xml_structure() -> None:
    platform = demo_platform()
    root = ET.fromstring(to_simgrid_xml(platform).split("\n", 2)[2])
    assert root.get("version") == "4.1"
    hosts = {h.get("id"): h for h in root.iter("host")}
    assert len(hosts) == len(platform) + 1
    assert hosts["cpu06"].get("core") == "32"
    links = {link.get("id"): link for link in root.iter("link")}
    assert links["cpu01-nic"].get("sharing_policy") == "SPLITDUPLEX"
    routes = list(root.iter("route"))
    assert len(routes) == len(platform) * (len(platform) - 1) // 2 + len(platform)
    for route in routes:
        latency = sum(
            float(str(links[str(c.get("id"))].get("latency")).rstrip("s"))
            for c in route.iter("link_ctn")
        )
        assert latency == pytest.approx(platform.latency)


@pytest.mark.simgrid
def test_simgrid_loads_the_exported_platform(tmp_path: Path) -> None:
    require(importlib.util.find_spec("simgrid") is not None, "SimGrid Python bindings")
    platform = generate_platform(ClusterSpec(nodes=6, heterogeneous=True), seed=1)
    xml = tmp_path / "platform.xml"
    xml.write_text(to_simgrid_xml(platform))
    probe = textwrap.dedent("""
        import json, sys
        from simgrid import Engine, Host
        engine = Engine(sys.argv[:1])
        engine.load_platform(sys.argv[1])
        hosts = {h.name: [h.core_count, h.speed] for h in engine.all_hosts}
        links, latency = Host.by_name(sys.argv[2]).route_to(Host.by_name(sys.argv[3]))
        print(json.dumps({"hosts": hosts, "route": [l.name for l in links], "latency": latency}))
    """)
    a, b = platform.node_names[0], platform.node_names[1]
    # One SimGrid Engine per process: probe in a child so no other test's engine is disturbed.
    out = subprocess.run(
        [sys.executable, "-c", probe, str(xml), a, b],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["hosts"][a] == [platform.nodes[0].cores, platform.nodes[0].speed]
    assert len(seen["hosts"]) == len(platform) + 1
    assert seen["route"] == [f"{a}-nic_UP", f"{b}-nic_DOWN"]
    assert seen["latency"] == pytest.approx(platform.latency)


def test_dumped_yaml_states_its_units() -> None:
    assert dumps_platform(demo_platform()).startswith("# wass-chat platform. Units:")
