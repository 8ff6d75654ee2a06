"""`python -m extractor.cli`: the same as the `extractor` command."""

from extractor.cli import main

main()
