"""The per-step loop: distribution, masking, renormalisation and sampling."""
