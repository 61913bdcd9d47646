"""Benchmarks (`make bench`): each figure measured against its floor in the same run, on the same machine."""
