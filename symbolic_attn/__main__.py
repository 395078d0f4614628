"""``python -m symbolic_attn`` is the ``symbolic-attn`` command."""

from symbolic_attn.cli import console_main

raise SystemExit(console_main())
