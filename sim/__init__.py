"""Workflow and platform model, WfFormat I/O, generators and the discrete-event simulator."""
