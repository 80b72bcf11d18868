"""Checks of the C sources that run in `make lint` (python -m devcheck.<check>, tools/ on the path)."""
