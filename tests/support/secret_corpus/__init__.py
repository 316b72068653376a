"""A corpus of planted secrets and harmless look-alikes, and the figures the scrubber gets on it."""
