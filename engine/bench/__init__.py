"""`make bench`: masking overhead, chart and GUI lag, memory, measured side by side."""
