from fusiondiff.cli import main

raise SystemExit(main())
