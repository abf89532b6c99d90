"""Broken plugins, one module per way of breaking."""
