"""Schedulers, classic and learned, and the benchmark harness that compares them."""
