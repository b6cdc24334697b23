"""The zoo of planted causes: each scenario records a live side and a reconstructed side that
differ by one known cause, which fusiondiff must name first."""
