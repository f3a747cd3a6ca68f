"""Tests of gateway/search/."""
