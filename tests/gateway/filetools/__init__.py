"""Tests of gateway/filetools/."""
