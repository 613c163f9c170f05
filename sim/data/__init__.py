"""Shipped assets: the demo platform and demo workflows (loaded by :mod:`sim.demo`)."""
