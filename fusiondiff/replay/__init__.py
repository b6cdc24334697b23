"""Replay: run repro scripts (legacy ones translated) and write faithful repro scripts from captures."""
