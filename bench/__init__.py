"""Benchmarks run by `make bench` (`python -m bench`); results in bench/results.md."""
