"""Benchmarks run only on request: ``pytest bench --benchmark-enable``.

Each kernel is timed beside the way a numpy user would write it; compare the
ratios within one run (the machine is shared and noisy).
"""
