"""patterns.deferred: a pattern compiled on first use behaves as the compiled one, from its first use on."""

from __future__ import annotations

import copy
import re

from extractor.patterns import deferred


def test_a_deferred_pattern_is_not_compiled_until_used_and_then_is_the_compiled_pattern():
    lazy, compiled = deferred(r"(?P<word>ab+)c", re.I), re.compile(r"(?P<word>ab+)c", re.I)
    assert lazy.pattern == compiled.pattern and "search" not in vars(lazy)  # the source without compiling
    assert lazy.search("xABBC").span() == compiled.search("xABBC").span()
    assert lazy.flags == compiled.flags and lazy.groups == compiled.groups and lazy.groupindex == compiled.groupindex
    text = "abc ABBC abd"
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.sub("-", text) == compiled.sub("-", text) and lazy.split(text) == compiled.split(text)
    assert lazy.match(text, 4) is not None and lazy.fullmatch("abc") is not None and lazy.findall(text) == ["ab", "ABB"]


def test_a_deferred_pattern_copies():
    lazy = deferred(r"a+")
    assert copy.deepcopy(lazy).search("baa") is not None
