"""One routes module per resource; each exposes a `router`."""
