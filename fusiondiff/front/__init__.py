"""The fronts: the console script and its command line, the API that starts from files, the
notebook, the demo and live capture in a session. The top layer: nothing imports it."""
