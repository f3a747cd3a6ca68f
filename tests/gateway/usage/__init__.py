"""Tests of gateway/usage/."""
