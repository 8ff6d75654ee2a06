"""Packaging layout only (everything else is in pyproject.toml).

The repository keeps the design card's top-level folders (extractor/, schemas/, prompts/, evals/), but a
wheel must not install generic top-level names like `schemas` or `evals`: they are mapped under the one
import name `extractor` (schemas/ -> extractor.schemas, prompts/ -> extractor.prompts, evals/ ->
extractor.evals). setuptools' package-dir mapping does this for wheels and editable installs alike.
"""

import hashlib
import sys
from pathlib import Path

from setuptools import Extension, find_namespace_packages, setup

FOLDERS = {
    "extractor": "extractor",
    "extractor.schemas": "schemas",
    "extractor.prompts": "prompts",
    "extractor.evals": "evals",
}
# Data-only folders are packages too (namespace packages), so setuptools ships their files as package data.
DATA = {
    "extractor.review.templates": ["*.html"],
    "extractor.review.static": ["*"],
    "extractor.schemas.lexicon.stock_compensation": ["*.toml"],
    "extractor.prompts.stock_compensation": ["*.toml"],
    "extractor.prompts": ["README.md"],
    "extractor.loaders": ["html_rows.pyx", "html_rows.pyi"],  # hashed as code (code_version), typed for mypy
}
# Repository folders under evals/ that are data or scripts, not code the package runs.
NOT_SHIPPED = ("suites*", "gold*", "benchmarks*", "labeling*", "cassettes*", "lexicon.*", "local_model.*")


def packages() -> list[str]:
    """Every package under each mapped folder, named by its import path (__pycache__ folders excepted)."""
    found = []
    for name, folder in FOLDERS.items():
        excluded = ["*__pycache__*", *(NOT_SHIPPED if folder == "evals" else ())]
        found += [name, *(f"{name}.{sub}" for sub in find_namespace_packages(folder, exclude=excluded))]
    return found


def extensions() -> list[Extension]:
    """The compiled reading of HTML tables (extractor/loaders/html_rows.pyx: twice faster a whole filing), built
    with Cython against the libxml2 and lxml headers lxml ships. Optional: where it cannot be compiled (no C
    compiler) the install goes on and the Python reading, which gives the same text, is used. The module carries
    its source's SHA-256, so html.py leaves a module built from an older source unused (a failed rebuild keeps the
    last one)."""
    pyx = "extractor/loaders/html_rows.pyx"
    try:
        import lxml
        from Cython.Build import cythonize

        source = Extension(
            "extractor.loaders.html_rows",
            [pyx],
            include_dirs=lxml.get_include(),
            define_macros=[("HTML_ROWS_SOURCE", f'"{hashlib.sha256(Path(pyx).read_bytes()).hexdigest()}"')],
            optional=True,
        )
        return cythonize([source], language_level=3, quiet=True, force=True)  # the hashed .pyx, not a stale .c
    except Exception as err:  # no Cython or lxml to build with (no build isolation, offline): Python reading
        print(f"note: the compiled HTML reader is not built ({err}); HTML is read in Python", file=sys.stderr)
        return []


setup(packages=packages(), package_dir=FOLDERS, package_data=DATA, ext_modules=extensions())
