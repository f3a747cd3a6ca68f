import inspect

import gateway


def test_public_api_is_exactly_what_all_lists() -> None:
    exported = {
        name
        for name in dir(gateway)
        if not name.startswith("_") and not inspect.ismodule(getattr(gateway, name))
    }
    assert exported == set(gateway.__all__)
    assert len(gateway.__all__) == len(set(gateway.__all__))
