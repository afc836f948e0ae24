"""Maskscope's engine: schema -> grammar -> mask backend -> step records. Never imports Qt."""
