"""The words of a report: each finding's title and evidence lines, the three questions' lines, and how values and paths are shown."""
