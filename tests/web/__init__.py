"""Tests of richprogress/web/: the pages, the endpoints and the static files."""
