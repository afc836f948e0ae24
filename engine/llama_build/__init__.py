"""The llama.cpp build: which CPU flags it is compiled with, and the proof that it runs here."""
