"""``python -m symbolic_attn`` is the ``symbolic-attn`` command."""

from symbolic_attn.cli import main

raise SystemExit(main())
