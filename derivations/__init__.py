"""The built-in derivation scripts (one result each); run them with ``symbolic-attn derive``.

Installed as a package so that ``symbolic-attn derive`` finds them from a wheel too.
The runner loads every ``*.py`` here except names starting with ``_`` (like this file).
"""
