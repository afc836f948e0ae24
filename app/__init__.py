"""Maskscope's Qt desktop front-end. Only this package imports Qt; engine/ stays Qt-free."""
