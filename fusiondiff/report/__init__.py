"""Renderers: pure functions from records to text. The library never prints."""
