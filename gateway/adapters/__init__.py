"""Vendor formats. Each module maps the vendor-neutral definitions to one SDK's shapes."""
