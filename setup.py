"""Packaging layout only (everything else is in pyproject.toml).

The repository keeps the design card's top-level folders (extractor/, schemas/, prompts/, evals/), but a
wheel must not install generic top-level names like `schemas` or `evals`: they are mapped under the one
import name `extractor` (schemas/ -> extractor.schemas, prompts/ -> extractor.prompts, evals/ ->
extractor.evals). setuptools' package-dir mapping does this for wheels and editable installs alike.
"""

from setuptools import find_namespace_packages, setup

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


setup(packages=packages(), package_dir=FOLDERS, package_data=DATA)
