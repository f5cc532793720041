"""Inspector panes: each module here defines `PANE = PaneSpec(...)` (see `ui/pane.py`).

Adding a pane is adding a module; the shell discovers it and lists it in the rail.
"""
