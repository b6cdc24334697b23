"""The report formats: each renders a whole diff (or a capture, a rank set, a timers reconciliation) as text, Markdown, HTML, Perfetto or the JSON record."""
