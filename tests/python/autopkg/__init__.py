"""A package of known calls for the automatic-span tests (nothing here is decorated)."""
