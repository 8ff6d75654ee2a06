"""Types of the compiled reading of HTML tables (html_rows.pyx)."""

from collections.abc import Callable
from typing import TypeVar

from lxml import etree

LXML_VERSION: str
SOURCE_SHA256: str

_Row = TypeVar("_Row")

def rows(
    table: etree._Element,
    Row: Callable[[list[str], list[int], list[int]], _Row],
    python_span: Callable[[str], int],
    python_one_line: Callable[[str], str],
) -> list[_Row] | None: ...
def walk(root: etree._Element) -> list[str | etree._Element] | None: ...
def merge_markers(texts: list[str]) -> None: ...
def draw(rows: list[_Row]) -> tuple[list[str], int, dict[tuple[int, int], int]] | None: ...
def paragraphs(table: etree._Element, python_one_line: Callable[[str], str]) -> list[str] | None: ...
