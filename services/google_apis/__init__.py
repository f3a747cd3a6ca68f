"""The Google API catalog: every method of every API whose discovery document google-api-python-client ships.

About 13,800 tools (340-odd APIs at their newest stable versions), served through the same three
meta-tools as every other catalog. `documents.py` finds the documents and picks versions; `methods.py`
makes each method's entry (name, action, flags, summary); `text.py` and `markup.py` make
descriptions plain text; `index.py` caches the entries per package
version; `params.py` makes a method's params model on first use; `invoke.py` calls it through the Google
backend's client; `provider.py` is the `google-apis` catalog provider. See docs/google-apis.md.
"""

from gateway.errors import UserError

try:
    from .provider import CatalogOptions, catalog_toolset, provide
except ModuleNotFoundError as exc:  # loading the catalog's entry point says which extra, not a traceback
    raise UserError(
        f"the google-apis catalog needs the google extra: pip install 'metatool-gateway[google]' "
        f"({exc.name} is missing)"
    ) from None

__all__ = ["CatalogOptions", "catalog_toolset", "provide"]
