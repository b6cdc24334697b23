"""``python -m fusiondiff``: the console script's entry (:mod:`fusiondiff.console`), which handles
Ctrl-C from its first statement. The package's ``__init__`` imports nothing, so there is almost
nothing before it; a Ctrl-C in that moment is one line and exit 130 too."""

try:
    from fusiondiff.console import main

    code = main()
except KeyboardInterrupt:
    import sys

    try:
        sys.stderr.write("fusiondiff: interrupted\n")
    except (OSError, ValueError, AttributeError):
        pass
    code = 130
raise SystemExit(code)
