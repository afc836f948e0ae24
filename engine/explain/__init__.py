"""The arithmetic of one step, written out: what the grammar kept and how it was renormalised."""
