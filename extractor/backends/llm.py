"""The LLM backend: the note's tables and text in, a grounded, validated StockCompensationNote out.

The steps are written once, as a generator that yields each question for the model and receives
its parsed answer (`_plan`); `extract` drives it with the sync client, `aextract` with the async
one. So the same logic serves a single file and a concurrent batch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Generator
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from extractor import __version__
from extractor.document import Document
from extractor.extraction import Extraction, Filing, Provenance
from extractor.findings import Finding, Validation
from extractor.llm.blocks import note_blocks
from extractor.llm.client import Clients, EndpointError, LLMError, explain, make_clients
from extractor.llm.config import LLMConfig
from extractor.llm.grounding import Aligner, Grounder
from extractor.llm.markdown import section_markdown
from extractor.llm.merge import merge_all
from extractor.llm.modes import StructuredMode
from extractor.llm.prompts import Prompt, load_prompt
from extractor.llm.response_model import quoted_view, to_schema
from extractor.llm.usage import Usage, charge, counting
from extractor.periods import infer_fiscal_end
from extractor.schemas.concepts import iter_located_facts
from extractor.schemas.facts import Fact
from extractor.schemas.stock_compensation import StockCompensationNote
from extractor.sections import NoNoteFound, Section, find_note, split
from extractor.tables import layout
from extractor.validator import validate
from extractor.validator.factset import FactSet
from extractor.validator.grounding import SourceText

FEEDBACK_LIMIT = 20  # findings quoted back to the model in one re-ask
Spans = Collection[tuple[int, int]]  # character ranges of the tables and paragraphs to ask about
T = TypeVar("T")
Compute = Callable[..., Awaitable[Any]]  # runs a function somewhere else and awaits its result (bulk.compute)


@dataclass
class Ask:
    """One question for the model: the conversation so far and the shape of the answer."""

    messages: list[dict[str, Any]]
    response_model: type[BaseModel]
    optional: bool = False  # a failed optional ask answers with its LLMError (the plan keeps what it has)


class LLMBackend:
    """Extract with any OpenAI-compatible endpoint; clients are made on first use."""

    def __init__(
        self,
        config: LLMConfig,
        prompt: Prompt | None = None,
        clients: Clients | None = None,
        compute: Compute | None = None,
    ) -> None:
        self.config = config
        self.prompt = prompt or load_prompt(config.prompt)
        self._clients = clients
        self.compute = compute  # where aextract's computing runs (a bulk worker's thread); None: on the loop

    @property
    def clients(self) -> Clients:
        if self._clients is None:
            self._clients = make_clients(self.config)
        return self._clients

    def warm(self) -> None:
        """Build now what every whole-note request needs and no document changes: the note's answer model and
        its JSON schema as the mode sends it (~25 ms of CPU). A bulk worker of the LLM backend calls this before
        it says it is ready; else its first document paid for it, and every request queued behind it waited."""
        if self.prompt.unit == "block":
            return  # a block's answer model is made for that block
        view = quoted_view(StockCompensationNote)
        view.model_json_schema()  # kept by the view: what the json_schema, json and md_json modes send
        if self.config.mode is StructuredMode.tools:
            view.openai_schema  # noqa: B018  # instructor keeps it per class; the first request reads it

    def extract(self, document: Document, blocks: Spans | None = None, validated: bool = False) -> Extraction:
        """Extract one document; with `blocks`, only the tables and paragraphs overlapping those spans, one
        request each whatever the prompt's unit (the hybrid backend's questions). `validated`: with the
        validator's findings against the document attached, reusing the re-ask check when it validated
        the very note returned (a bulk run then validates each document once, not twice)."""
        with counting() as usage:
            plan = self._plan(document, blocks, usage, validated)
            step = _advance(plan, None)
            while isinstance(step, Ask):
                step = _advance(plan, self._complete(step))
            return step

    async def aextract(self, document: Document, blocks: Spans | None = None, validated: bool = False) -> Extraction:
        """As `extract`, on the async client: run many documents concurrently with asyncio.gather."""
        with counting() as usage:
            plan = self._plan(document, blocks, usage, validated)
            step = await self.run(_advance, plan, None)
            while isinstance(step, Ask):
                answer = await self._acomplete(step)
                step = await self.run(_advance, plan, answer)
            return step

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """`func(*args)` where this backend computes: its `compute`, else here on the loop."""
        return func(*args) if self.compute is None else await self.compute(func, *args)

    def _complete(self, ask: Ask) -> BaseModel | LLMError:
        try:
            return self.clients.sync.chat.completions.create(
                **self.clients.create_kwargs(ask.messages, ask.response_model)
            )
        except Exception as error:
            return self._failure(ask, error)

    async def _acomplete(self, ask: Ask) -> BaseModel | LLMError:
        try:
            kwargs = self.clients.create_kwargs(ask.messages, ask.response_model)
            return await self.clients.run_async.chat.completions.create(**kwargs)
        except Exception as error:
            return self._failure(ask, error)

    def _failure(self, ask: Ask, error: Exception) -> LLMError:
        """The error as one sentence: answered to the plan for an optional ask, else raised, carrying the
        calls made so far (a failed document still cost them)."""
        failure = explain(error, self.config, self._clients.proxy if self._clients is not None else None)
        if ask.optional and not isinstance(failure, EndpointError):
            return failure
        failure.usage = charge()
        try:
            raise failure from error
        finally:  # this frame is on the error's traceback: kept here too, it would hold the document's work in a cycle
            del failure

    def questions(self, document: Document, blocks: Spans | None = None) -> list[Ask]:
        """The first question for each part of the note (or each of `blocks`): what a Batch API file holds for the document."""
        return [ask for _, ask in self._questions(document, blocks, _fiscal_end(document))[0]]

    def _questions(
        self, document: Document, blocks: Spans | None, fiscal_end: date
    ) -> tuple[list[tuple[Section, Ask]], list[str]]:
        """One question per piece of the note with content (a part of the note, or one table or paragraph
        for prompts whose unit is 'block'), and the warnings about what was read."""
        section = find_note(document)
        if section is None:
            raise NoNoteFound(document.path, "no stock-compensation note found in this whole filing")
        pieces = self._pieces(document, section, blocks)
        warnings = list(document.warnings)
        by_block = self.prompt.unit == "block" or blocks is not None
        unit = "block(s)" if by_block else "part(s)"
        if section.start > 0 or section.end < len(document.text):
            warnings.append(f"read {section.why}, offsets {section.start}-{section.end}, in {len(pieces)} {unit}")
        elif "whole document" not in section.why:
            warnings.append(section.why)
        title = document.metadata.title or section.title or document.id
        asks = []
        for piece, content, response_model, parts in pieces:
            focus = f"Fill only these parts of the schema: {', '.join(sorted(parts))}." if parts else ""
            messages = self.prompt.messages(
                title=title, fiscal_year_end=fiscal_end.isoformat(), focus=focus, content=content
            )
            asks.append((piece, Ask(messages, response_model, optional=by_block)))
        return asks, warnings

    def _pieces(
        self, document: Document, section: Section, spans: Spans | None
    ) -> list[tuple[Section, str, type[BaseModel], frozenset[str] | None]]:
        """What each request holds: its span, its text as the model reads it, the answer's shape, and the parts asked for.
        A block prompt constrains quotes to the block's numbers; a note prompt asked about a block keeps its own quotes."""
        tables, paragraphs = layout(document)
        if self.prompt.unit == "block" or spans is not None:
            constrained = self.prompt.unit == "block"
            blocks = note_blocks(document, tables, paragraphs, section.start, section.end, spans)
            return [
                (
                    Section(b.start, b.end, section.title, f"{b.kind} at {b.start}"),
                    b.content,
                    quoted_view(StockCompensationNote, b.parts, b.items, b.quotes)
                    if constrained
                    else quoted_view(StockCompensationNote, b.parts),
                    b.parts,
                )
                for b in blocks
            ]
        chunks = split(document, section, self.config.max_chars, self.config.overlap_chars)
        contents = ((chunk, section_markdown(document, tables, paragraphs, chunk.start, chunk.end)) for chunk in chunks)
        return [
            (chunk, content, quoted_view(StockCompensationNote), None) for chunk, content in contents if content.strip()
        ]

    def _plan(
        self, document: Document, blocks: Spans | None, usage: Usage, validated: bool = False
    ) -> Generator[Ask, BaseModel | LLMError, Extraction]:
        tables, _ = layout(document)
        aligner = Aligner(document, tables)
        source = SourceText.of(document)  # the validator's view of the document, built once for every re-ask
        fiscal_end = _fiscal_end(document)
        questions, warnings = self._questions(document, blocks, fiscal_end)
        # One question whose answer is the extraction: its re-ask check can be the final validation
        # (against the whole document) when the note it checks is the one returned.
        final_check = validated and len(questions) == 1
        # a note, its final validation and its facts as the validation merged them
        checked: tuple[StockCompensationNote, Validation, list[Fact]] | None = None
        notes: list[StockCompensationNote] = []
        failed: list[str] = []
        for chunk, first in questions:
            messages, response_model = first.messages, first.response_model
            answer = yield first
            within = (chunk.start, chunk.end)
            if isinstance(answer, LLMError):  # an optional ask's failure (a required one's is raised: _failure)
                failed.append(f"{chunk.why}: {answer}")
                continue
            try:
                note, problems = self._ground(answer, document, aligner, within)
            except LLMError as error:
                if not first.optional:
                    raise
                failed.append(f"{chunk.why}: {error}")  # one block failed: the others still count
                continue
            if self.config.feedback_reasks:  # no re-asks: no need to know
                validation, facts = self._check(note, document, source, final_check)
                checked = (note, validation, facts) if facts is not None else None
                errors = _worth_a_reask(validation)
            else:
                errors = []
            for _ in range(self.config.feedback_reasks):
                if not errors:
                    break
                usage.reasks += 1
                asked = [
                    *messages,
                    {"role": "assistant", "content": answer.model_dump_json(exclude_defaults=True)},
                    _feedback(errors),
                ]
                retried = yield Ask(asked, response_model, optional=True)
                if isinstance(retried, LLMError):
                    warnings.append(f"the re-ask with the validator's findings failed ({retried}); first answer kept")
                    break
                retried_note, retried_problems = self._ground(retried, document, aligner, within)
                retried_check, facts = self._check(retried_note, document, source, final_check)
                retried_errors = _worth_a_reask(retried_check)
                if len(retried_errors) > len(errors):
                    break  # the re-ask made it worse: keep the first answer
                checked = (retried_note, retried_check, facts) if facts is not None else None
                messages, answer, note, problems, errors = (
                    asked,
                    retried,
                    retried_note,
                    retried_problems,
                    retried_errors,
                )
            warnings.extend(problems)
            notes.append(note)
        if failed and not notes:
            raise LLMError(f"every request failed; the first: {failed[0]}")
        warnings.extend(f"nothing read from the {reason}" for reason in failed)
        conflicts: list[str] = []
        note = merge_all(notes, conflicts) if notes else StockCompensationNote()
        warnings.extend(f"parts of the note disagree: {c}" for c in conflicts)
        if not note.fiscal_year_ends:
            note.fiscal_year_ends = note.years_reported(fiscal_end)
        extraction = self._extraction(document, note, len(tables), warnings, usage)
        if validated and checked is not None and checked[0] is note:
            extraction.validation = checked[1]
            extraction.keep_facts(checked[2])
        elif validated:
            extraction.validation = validate(extraction, document, keep_facts=True)
        return extraction

    def _ground(
        self, answer: BaseModel, document: Document, aligner: Aligner, within: tuple[int, int]
    ) -> tuple[StockCompensationNote, list[str]]:
        grounder = Grounder(document, aligner, within)
        try:
            note = to_schema(answer, StockCompensationNote, grounder)
        except ValidationError as error:  # a required number the code could not read ("n/a" for an expense)
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise LLMError(
                f"the answer has numbers that cannot be read ({'; '.join(grounder.problems) or where})"
            ) from error
        return note, grounder.problems  # type: ignore[return-value]

    def _check(
        self, note: StockCompensationNote, document: Document, source: SourceText, final: bool
    ) -> tuple[Validation, list[Fact] | None]:
        """The validator on one answer, and the note's facts as it merged them when it ran against the whole
        document (else None). A re-ask needs only the document's text; when this answer may be the extraction
        (`final`) and the note will be returned as it is (it names its fiscal year ends, else the plan fills
        them in), the whole document, coverage included, so that the check is also the extraction's
        validation, and its merged facts the ones a bulk run renders."""
        extraction = Extraction(
            document_id="", document_path="", document_sha256="", note=note, provenance=self._provenance()
        )
        if not (final and note.fiscal_year_ends):
            return validate(extraction, source), None
        facts = FactSet(iter_located_facts(note))
        return validate(extraction, document, facts=facts), [fact for _, fact in facts]

    def _provenance(self) -> Provenance:
        return Provenance(
            backend="llm",
            model=self.config.model,
            prompt_id=self.prompt.name,
            prompt_hash=self.prompt.hash,
            code_version=__version__,
        )

    def _extraction(
        self, document: Document, note: StockCompensationNote, tables: int, warnings: list[str], usage: Usage
    ) -> Extraction:
        return Extraction(
            document_id=document.id,
            document_path=document.path,
            document_sha256=document.sha256,
            note=note,
            provenance=self._provenance(),
            section=document.note,
            filing=Filing.of(document),
            tables_found=tables,
            warnings=warnings,
            usage=usage,
        )


def _fiscal_end(document: Document) -> date:
    """The fiscal year end the note reports (the prompt names it; an answer without years gets it)."""
    return infer_fiscal_end(document.read_text, document.metadata.fiscal_period_end)


def _advance(
    plan: Generator[Ask, BaseModel | LLMError, Extraction], answer: BaseModel | LLMError | None
) -> Ask | Extraction:
    """The plan's next question, or its result once it has no more."""
    try:
        return plan.send(answer)  # type: ignore[arg-type]  # None starts a fresh generator
    except StopIteration as done:
        return done.value


def _worth_a_reask(validation: Validation) -> list[Finding]:
    """Errors worth a re-ask: not coverage. An empty answer is no reason (a part of a split note may
    rightly hold nothing; the merged extraction is checked for emptiness as a whole), nor are numbers
    of the document left unread (only a check against the whole document reports them)."""
    return [f for f in validation.errors if not f.rule.startswith("coverage.")]


def _feedback(errors: list[Finding]) -> dict[str, str]:
    """The validator's error findings, as a user turn asking for a corrected answer."""
    lines = [f"- {finding.message}" for finding in errors[:FEEDBACK_LIMIT]]
    more = f"\n(and {len(errors) - FEEDBACK_LIMIT} more)" if len(errors) > FEEDBACK_LIMIT else ""
    return {
        "role": "user",
        "content": "Your answer does not agree with itself or with the filing:\n"
        + "\n".join(lines)
        + more
        + "\nCheck these numbers against the input, correct them (copy, never compute), and answer again in full.",
    }
