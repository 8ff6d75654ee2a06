"""Gold facts from XBRL: an instance (.xml) or an inline XBRL filing (.htm) read into the facts format.

A filer's own XBRL tags say what each number is, so an XBRL filing yields gold for an eval suite
without hand labeling. The tags follow the taxonomy, the gold follows gold/README.md; this package
translates between the two and reports (never silently drops) what it cannot translate:

    result = read_gold(Path("filing.htm"))
    result.facts          # list[Fact], one per (concept, period end, dims), sources into load(path).text
    result.skipped        # Counter: why tagged facts were left out

formats.py reads values, instance.py reads XBRL, mapping.py maps concepts and axes to gold's,
spans.py finds printings in the rendered text, gold.py puts them together.
"""

from extractor.xbrl.formats import duration_years, ix_number
from extractor.xbrl.gold import GoldFacts, read_gold, write_facts
from extractor.xbrl.instance import XbrlError
from extractor.xbrl.mapping import (
    award_of_member,
    in_scope_concepts,
    known_extension_concepts,
)

__all__ = [
    "GoldFacts",
    "XbrlError",
    "award_of_member",
    "duration_years",
    "in_scope_concepts",
    "ix_number",
    "known_extension_concepts",
    "read_gold",
    "write_facts",
]
