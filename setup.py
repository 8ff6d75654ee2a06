"""Packaging layout only (everything else is in pyproject.toml).

The repository keeps the design card's top-level folders (extractor/, schemas/, prompts/, evals/), but a
wheel must not install generic top-level names like `schemas` or `evals`: they are mapped under the one
import name `extractor` (schemas/ -> extractor.schemas, prompts/ -> extractor.prompts, evals/ ->
extractor.evals). setuptools' package-dir mapping does this for wheels and editable installs alike.
"""

from setuptools import find_packages, setup

FOLDERS = {
    "extractor": "extractor",
    "extractor.schemas": "schemas",
    "extractor.prompts": "prompts",
    "extractor.evals": "evals",
}


def packages() -> list[str]:
    """Every package under each mapped folder, named by its import path (folders without __init__.py, such as the benchmark scripts, are not packages)."""
    found = []
    for name, folder in FOLDERS.items():
        found += [name, *(f"{name}.{sub}" for sub in find_packages(folder))]
    return found


setup(
    packages=packages(),
    package_dir=FOLDERS,
    package_data={
        "extractor.review": ["templates/*.html", "static/*"],
        "extractor.schemas": ["lexicon/*/*.toml"],
        "extractor.prompts": ["*/*.toml", "README.md"],
    },
)
