"""Slurm accounting: the sacct fields we read, parsing, fetching, the Parquet cache, synthesis."""
