"""Checking a student's own derivation, line by line (issue 22)."""
