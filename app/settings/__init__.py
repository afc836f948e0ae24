"""Generation and model settings: the panel and what is remembered."""
