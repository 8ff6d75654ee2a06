"""instructor's check for async validators, run once per response model instead of seven times a request.

Before each request instructor walks the whole response model (every nested model and annotation)
to refuse async validators it cannot run: in its client, its patched create, twice in each of two
model preparations and in its retry loop. For the note's view that is ~160 classes and annotations
per walk, ~2 ms of CPU per request, the same answer every time: a class does not change. So the
walk is remembered per class once it passed; a model it refuses is walked (and refused) every time,
as before. Installed by `make_clients`; a future instructor without these names is left alone.
"""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Callable
from typing import Any

# Where instructor looks the check up: the module that defines it (imported inside functions at each
# call) and the one that imported it by name when it was loaded.
HOLDERS = ("instructor.v2.validation.async_validators", "instructor.v2.core.patch")
NAME = "reject_async_validators"

_passed: weakref.WeakSet[type] = weakref.WeakSet()  # views are built per block: let unused ones go
_walk: Callable[[Any], None] | None = None  # instructor's own check


def check_once(response_model: Any) -> None:
    """instructor's check, skipped for a class that passed it before."""
    assert _walk is not None, "install() first"
    if isinstance(response_model, type) and response_model in _passed:
        return
    _walk(response_model)
    if isinstance(response_model, type):
        _passed.add(response_model)


def install() -> bool:
    """Put `check_once` where instructor calls its check (once per process); False if instructor has none."""
    global _walk
    modules = []
    for name in HOLDERS:
        try:
            modules.append(importlib.import_module(name))
        except ImportError:
            return False
    current = getattr(modules[0], NAME, None)
    if current is check_once:
        return True
    if current is None or any(getattr(module, NAME, None) is not current for module in modules):
        return False  # not the layout this was written for: change nothing
    _walk = current
    for module in modules:
        setattr(module, NAME, check_once)
    return True
