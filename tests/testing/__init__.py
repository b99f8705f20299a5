"""Tests of the simulated web."""
