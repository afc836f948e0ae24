"""Running: the worker thread and the output pane."""
