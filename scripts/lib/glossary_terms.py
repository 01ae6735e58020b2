"""Where a glossary's terms occur in a source text and whether a translation holds their target
forms, as the terminology guarantee states it (docs/api.md#glossaries-and-kept-spans): each whole-
word occurrence of an entry's source, case as written, needs one of its target forms, exactly as
written, in the translation (two occurrences, two forms), but for the first letter's case at the
start of a sentence. For tools/make_glossary_benchmark.py, scripts/benchmark_glossary.py and
tests/e2e/scripts/glossary_guarantee_test.py: independent of the server's own matcher."""
import re

# Characters that join words: a term next to one of them ("dog" in "dog's", "shirt" in
# "T-shirt") is a whole word to some word-boundary rules and not to others.
_JOINERS = "'\u2019\\-"


def source_spans(text, source, strict=True):
    """The [begin, end) character ranges of `source` in `text` as a whole word (or words), case as
    written, left to right without overlap. Strict: not next to a letter, digit, underscore,
    apostrophe or hyphen; otherwise only letters, digits and underscores bound it."""
    joiners = _JOINERS if strict else ""
    pattern = rf"(?<![\w{joiners}]){re.escape(source)}(?![\w{joiners}])"
    return [m.span() for m in re.finditer(pattern, text)]


def sentence_starts_from_ranges(text, byte_ranges):
    """The character offsets in `text` where the sentences the API reports start (Hypothesis
    .sentences: [{"begin": b, "end": e}] as UTF-8 byte offsets; begin 0 may be left out in JSON)."""
    data = text.encode("utf-8")
    return {len(data[:r.get("begin", 0)].decode("utf-8", errors="ignore")) for r in byte_ranges}


def _sentence_starts(text):
    """Where sentences start when the API's ranges are not at hand: the text's first non-space
    character and the first after ., ! or ? and whitespace."""
    starts = {len(text) - len(text.lstrip())}
    starts.update(m.end() for m in re.finditer(r"[.!?]\s+", text))
    return starts


def _swap_first(form):
    return form[:1].swapcase() + form[1:]


def form_count(translation, targets, sentence_starts=None):
    """How many times one of the `targets` appears in `translation` (left to right without
    overlap, longer forms first), exactly as written or, at a sentence start (`sentence_starts`,
    character offsets; by default guessed from punctuation), with its first letter's case
    changed."""
    if sentence_starts is None:
        sentence_starts = _sentence_starts(translation)
    forms = set(targets)
    initial = {_swap_first(f) for f in targets} - forms
    alternatives = sorted(forms | initial, key=len, reverse=True)
    if not alternatives:
        return 0
    count = 0
    for match in re.finditer("|".join(re.escape(a) for a in alternatives), translation):
        if match.group() in forms or match.start() in sentence_starts:
            count += 1
    return count


def entry_counts(source_text, entry, translation, sentence_starts=None):
    """(occurrences of the entry's source in `source_text`, how many of them the translation
    satisfies): an entry is {"source": ..., "targets": [...]}."""
    occurrences = len(source_spans(source_text, entry["source"]))
    found = form_count(translation, entry["targets"], sentence_starts)
    return occurrences, min(occurrences, found)


def unmet_entries(source_text, glossary, translation, sentence_starts=None):
    """The entries of `glossary` whose occurrences in `source_text` the translation does not all
    satisfy, each as (entry, occurrences, forms found); [] when the guarantee holds."""
    unmet = []
    for entry in glossary:
        occurrences = len(source_spans(source_text, entry["source"]))
        found = form_count(translation, entry["targets"], sentence_starts)
        if found < occurrences:
            unmet.append((entry, occurrences, found))
    return unmet
