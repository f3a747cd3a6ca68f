"""Tests of gateway/cli/."""
