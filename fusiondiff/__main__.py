"""``python -m fusiondiff``. Ctrl-C is handled from the first statement: while the command line's
modules are still being imported it is one line and exit 130 too, never a traceback (the package's
``__init__`` imports nothing, so there is almost nothing before this)."""

try:
    from fusiondiff.cli import main

    code = main()
except KeyboardInterrupt:
    import sys

    try:
        sys.stderr.write("fusiondiff: interrupted\n")
    except (OSError, ValueError):
        pass
    code = 130
raise SystemExit(code)
