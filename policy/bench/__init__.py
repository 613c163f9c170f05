"""The ``wass-chat bench`` harness: instance matrix, parallel runs, statistics, reports."""
