# cython: language_level=3, boundscheck=False, wraparound=False
"""The rows of an HTML table read straight from libxml2's tree: an optional compiled twin of
extractor.loaders.html._rows, which stays the reference.

A whole 10-K holds 10,000 to 170,000 table cells. Read through lxml, every cell costs element proxies and
Python objects (0.4-2 us a cell: twice the parse of the filing); here a cell's text is gathered from the
tree's own nodes in C and only its string is made; `walk` does the same for the document around the
tables. The result is the same, line for line and cell for cell (tests compare both readings on real filings
and on generated documents); a document or table holding anything this reading does not follow exactly (a
namespaced or non-ASCII tag name, an entity node, a style or span it cannot read as ASCII) is handed back
(None), and the Python reading reads it.
"""

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, strcmp, strlen, strpbrk

from lxml.includes cimport tree
from lxml.includes.etreepublic cimport LXML_VERSION_STRING, _Document, _Element, elementFactory, import_lxml__etree

import_lxml__etree()

# The lxml this module was compiled against: it reads lxml's element struct, so html.py uses it only beside
# that same lxml (a later upgrade of lxml falls back to the Python reading until the package is rebuilt).
LXML_VERSION = LXML_VERSION_STRING.decode("ascii")

cdef extern from *:
    """
    #ifndef HTML_ROWS_SOURCE
    #define HTML_ROWS_SOURCE ""
    #endif
    """
    const char* HTML_ROWS_SOURCE

# The SHA-256 of the .pyx this module was compiled from (setup.py gives it): html.py leaves a module built from
# another source unused, as where a rebuild failed (the extension is optional) and kept the last build.
SOURCE_SHA256 = HTML_ROWS_SOURCE.decode("ascii")

# tag classes, as extractor.loaders.html reads them
cdef enum:
    OTHER = 0
    BLOCK = 1  # BLOCK_TAGS: a space before and after its text
    BREAK = 2  # br: a space before
    SKIP = 3  # SKIP_TAGS: nothing of it is text (its tail is)
    CELL = 4  # td, th (no space of their own inside a cell's text)
    TABLE = 5  # table: a block, and drawn apart when the walk meets it
    UNREAD = 6  # a name this reading does not compare as lxml does (a namespace, a byte outside a-z0-9:-_.)

class Unread(Exception):
    """The table holds something only the Python reading follows exactly."""


cdef int _kind(tree.xmlNode* node) except -1:
    """The tag class of an element. libxml2's HTML parser gives names in lower case; a name with any upper-case
    or non-ASCII byte, or a namespace, is UNREAD (lxml matches some names exactly and lowers others, and two
    non-ASCII letters lower to ASCII ones in Python): the Python reading reads the document."""
    cdef const char* name = <const char*> node.name
    cdef size_t n = strlen(name), i
    cdef unsigned char ch
    if node.ns != NULL:
        return UNREAD
    for i in range(n):
        ch = <unsigned char> name[i]
        if ch >= 128 or 65 <= ch <= 90:
            return UNREAD
    if n == 1:
        return BLOCK if name[0] == b"p" else OTHER
    if n == 2:
        if name[0] == b"t":
            return CELL if name[1] == b"d" or name[1] == b"h" else (BLOCK if name[1] == b"r" else OTHER)
        if name[0] == b"h":
            return BLOCK if b"1" <= name[1] <= b"6" or name[1] == b"r" else OTHER
        if name[0] == b"d":
            return BLOCK if name[1] == b"l" or name[1] == b"t" or name[1] == b"d" else OTHER
        if name[1] == b"l":
            return BLOCK if name[0] == b"u" or name[0] == b"o" else OTHER
        if name[0] == b"l" and name[1] == b"i":
            return BLOCK
        return BREAK if name[0] == b"b" and name[1] == b"r" else OTHER
    if n == 3:
        return BLOCK if strcmp(name, "div") == 0 or strcmp(name, "pre") == 0 else OTHER
    if n == 4:
        if strcmp(name, "body") == 0 or strcmp(name, "html") == 0:
            return BLOCK
        return SKIP if strcmp(name, "head") == 0 else OTHER
    if n == 5:
        if strcmp(name, "table") == 0:
            return TABLE
        if strcmp(name, "tbody") == 0 or strcmp(name, "thead") == 0 or strcmp(name, "tfoot") == 0 or \
                strcmp(name, "title") == 0:
            return BLOCK
        return SKIP if strcmp(name, "style") == 0 else OTHER
    if n == 6:
        if strcmp(name, "header") == 0 or strcmp(name, "footer") == 0 or strcmp(name, "center") == 0:
            return BLOCK
        return SKIP if strcmp(name, "script") == 0 else OTHER
    if n == 7:
        return BLOCK if strcmp(name, "section") == 0 or strcmp(name, "article") == 0 else OTHER
    if n == 8:
        return SKIP if strcmp(name, "noscript") == 0 or strcmp(name, "template") == 0 else OTHER
    if n == 10:
        return BLOCK if strcmp(name, "blockquote") == 0 else OTHER
    return OTHER


cdef const char* _attribute(tree.xmlNode* node, const char* name) except? NULL:
    """The value of an attribute held as one text node (NULL when the element has no such attribute); an
    attribute spread over several nodes (entity references) is UNREAD."""
    cdef tree.xmlAttr* attr = node.properties
    while attr != NULL:
        if attr.ns == NULL and strcmp(<const char*> attr.name, name) == 0:
            if attr.children == NULL:
                return ""
            if attr.children.next != NULL or attr.children.type != tree.XML_TEXT_NODE:
                raise Unread()
            if attr.children.content == NULL:
                return ""
            return <const char*> attr.children.content
        attr = attr.next
    return NULL


cdef bint _hidden(tree.xmlNode* node) except -1:
    """html._hides: 'display:none' in the style once its spaces are removed and it is lowered. Matched on ASCII
    bytes alone, which is exact: no other character lowers to one of the pattern's letters (the two that lower
    to ASCII give 'i' followed by a combining dot, and 'k'). Each 'd' is a place a match can start."""
    cdef const char* style = _attribute(node, "style")
    cdef const char* at
    cdef const char* want = "display:none"
    cdef const char* p
    cdef size_t k
    cdef unsigned char ch
    if style == NULL:
        return False
    at = strpbrk(style, "dD")
    while at != NULL:
        p = at + 1
        k = 1
        while k < 12:
            ch = <unsigned char> p[0]
            if ch == 0:
                return False
            p += 1
            if ch == 32:
                continue
            if 65 <= ch <= 90:
                ch += 32
            if ch != <unsigned char> want[k]:
                break
            k += 1
        if k == 12:
            return True
        at = strpbrk(at + 1, "dD")
    return False


cdef int _span(tree.xmlNode* node, const char* name, object python_span) except -1:
    """html._span of the attribute: plain ASCII digits are read here, anything else by the Python function."""
    cdef const char* value = _attribute(node, name)
    cdef size_t i, n
    cdef long number = 0
    if value == NULL:
        return 0  # absent
    n = strlen(value)
    if n == 0 or n > 6:
        return python_span(value.decode("utf-8"))
    for i in range(n):
        if not (48 <= <unsigned char> value[i] <= 57):
            return python_span(value.decode("utf-8"))
        number = number * 10 + (value[i] - 48)
    return max(1, min(number, 100))


cdef struct Buffer:
    char* data
    size_t size
    size_t cap


cdef int _add(Buffer* buf, const char* text, size_t n) except -1:
    cdef char* grown
    if buf.size + n > buf.cap:
        buf.cap = max(buf.cap * 2, buf.size + n + 256)
        grown = <char*> realloc(buf.data, buf.cap)
        if grown == NULL:
            raise MemoryError()
        buf.data = grown
    memcpy(buf.data + buf.size, text, n)
    buf.size += n
    return 0


cdef bint _add_text(tree.xmlNode* node, Buffer* buf) except -1:
    """Whether the node is text (a CDATA section too); if so, its text added to the buffer."""
    if node.type != tree.XML_TEXT_NODE and node.type != tree.XML_CDATA_SECTION_NODE:
        return False
    if node.content != NULL:
        _add(buf, <const char*> node.content, strlen(<const char*> node.content))
    return True


cdef int _read_kind(tree.xmlNode* node) except -1:
    """_kind of an element this reading follows; Unread for any other."""
    cdef int kind = _kind(node)
    if kind == UNREAD:
        raise Unread()
    return kind


cdef int _cell_text(tree.xmlNode* top, Buffer* buf) except -1:
    """html._cell_text before its spaces are made one: the text nodes in order, a space before and after each
    visible block and before a line break, skipped and hidden elements left out (their tails kept). Walked
    with the tree's own links, so a cell nested thousands of elements deep needs no stack."""
    cdef tree.xmlNode* node = top.children
    cdef int kind
    while node != NULL:
        if _add_text(node, buf):
            pass
        elif node.type == tree.XML_ELEMENT_NODE:
            kind = _read_kind(node)
            if kind != SKIP and not _hidden(node):
                if kind == BLOCK or kind == TABLE or kind == BREAK:
                    _add(buf, " ", 1)
                if node.children != NULL:
                    node = node.children
                    continue
                if kind == BLOCK or kind == TABLE:
                    _add(buf, " ", 1)
        elif node.type != tree.XML_COMMENT_NODE and node.type != tree.XML_PI_NODE:
            raise Unread()  # an entity reference, an XInclude marker: lxml reads these its own way
        # next: the sibling, else climb, closing each block left (its tail follows it)
        while node.next == NULL:
            node = node.parent
            if node == top:
                return 0
            kind = _kind(node)
            if kind == BLOCK or kind == TABLE:
                _add(buf, " ", 1)
        node = node.next
    return 0


cdef tree.xmlNode* _after(tree.xmlNode* node, tree.xmlNode* top):
    """The node after `node` and all it holds, in document order inside `top` (NULL past its end)."""
    while node != top and node.next == NULL:
        node = node.parent
    return NULL if node == top else node.next


cdef tree.xmlNode* _next_in(tree.xmlNode* node, tree.xmlNode* top):
    """The element after `node` in document order, inside `top` (NULL past its end)."""
    node = node.children if node.children != NULL else _after(node, top)
    while node != NULL and node.type != tree.XML_ELEMENT_NODE:
        node = _after(node, top)  # (never into a non-element: an entity reference's children are its declaration's)
    return node


cdef str _one_line(Buffer* buf, object python_one_line):
    """html._one_line of a cell's text: an ASCII text's white space (what str.split() splits at) made one space
    here, none at either end; any other text by the Python function (Unicode's spaces, zero-width ones)."""
    cdef size_t i, n
    for i in range(buf.size):
        if <unsigned char> buf.data[i] >= 128:
            return python_one_line(PyUnicode_DecodeUTF8(buf.data, buf.size, NULL))
    n = _squeeze(buf, True)
    return PyUnicode_DecodeUTF8(buf.data, n, NULL) if n else ""


cdef size_t _squeeze(Buffer* buf, bint separators):
    """Each run of white space in the buffer made one space and none kept at either end, in place; the length
    left. White space: space, tab, line feed, carriage return, form feed and vertical tab (the renderer's
    _SPACES), and with `separators` the ASCII separators 0x1c-0x1f too (str.split()'s, for a cell's text)."""
    cdef size_t i, n = 0
    cdef unsigned char ch
    cdef bint space = False
    for i in range(buf.size):  # (the text is read at i, written at n <= i)
        ch = <unsigned char> buf.data[i]
        if ch == 32 or 9 <= ch <= 13 or (separators and 28 <= ch <= 31):
            space = True
        else:
            if space and n:
                buf.data[n] = 32
                n += 1
            space = False
            buf.data[n] = ch
            n += 1
    return n


cdef tree.xmlNode* _visible_row(tree.xmlNode* node, tree.xmlNode* top) except? NULL:
    """The first <tr> from `node` on (in document order inside `top`) that is not hidden, as table.iter("tr") and
    html._hidden find them; NULL past the end. A namespaced element is Unread."""
    while node != NULL:
        if node.ns != NULL:
            raise Unread()
        if strcmp(<const char*> node.name, "tr") == 0 and not _hidden(node):
            return node
        node = _next_in(node, top)
    return NULL


cdef tree.xmlNode* _cell_from(tree.xmlNode* node) except? NULL:
    """The first <td> or <th> from `node` on among a row's children (NULL past the last); an entity reference
    among them is Unread (lxml reads it its own way)."""
    while node != NULL:
        if node.type == tree.XML_ELEMENT_NODE:
            if _read_kind(node) == CELL:
                return node
        elif node.type == tree.XML_ENTITY_REF_NODE:
            raise Unread()
        node = node.next
    return NULL


cdef str _cell_line(tree.xmlNode* cell, Buffer* buf, object python_one_line):
    """html._cell_text: a cell's visible text on one line (read into `buf`); a hidden cell has none."""
    if _hidden(cell):
        return u""
    buf.size = 0
    _cell_text(cell, buf)
    return _one_line(buf, python_one_line)


def rows(_Element table not None, object Row, object python_span, object python_one_line):
    """html._rows of a table with no table inside it, its cells' texts on one line (as _collapse_spaces leaves
    them), or None when the Python reading must read it."""
    cdef tree.xmlNode* top = table._c_node
    cdef tree.xmlNode* node = _next_in(top, top)
    cdef tree.xmlNode* cell
    cdef Buffer buf
    cdef list found = [], texts, cols, spans
    cdef set held = set()
    cdef int r, c, colspan, rowspan, dr, dc
    buf.data = NULL
    buf.size = buf.cap = 0
    try:
        node = _visible_row(node, top)
        while node != NULL:
            r, c = len(found), 0
            texts, cols, spans = [], [], []
            found.append(Row(texts, cols, spans))
            cell = _cell_from(node.children)
            while cell != NULL:
                while held and (r, c) in held:
                    c += 1
                texts.append(_cell_line(cell, &buf, python_one_line))
                colspan = _span(cell, "colspan", python_span) or 1
                cols.append(c)
                spans.append(colspan)
                rowspan = _span(cell, "rowspan", python_span)
                if rowspan:
                    for dr in range(1, rowspan):
                        for dc in range(colspan):
                            held.add((r + dr, c + dc))
                c += colspan
                cell = _cell_from(cell.next)
            node = _visible_row(_next_in(node, top), top)
        return found
    except Unread:
        return None
    finally:
        free(buf.data)


# Wrapper tables (a table holding tables: an R page's note cell) are walked by recursion, a level a wrapper;
# deeper than this, the Python reading (which keeps a stack of its own) reads the document.
cdef int MAX_WRAPPERS = 200


cdef int _flush(Buffer* buf, list out) except -1:
    """_Renderer.flush: the text gathered since the last line break as a line, each run of ASCII white space
    (not the no-break space: it is content) made one space and none at either end; nothing when blank."""
    cdef size_t n = _squeeze(buf, False)
    if n:
        out.append(PyUnicode_DecodeUTF8(buf.data, n, NULL))
    buf.size = 0
    return 0


cdef bint _holds_table(tree.xmlNode* table) except -1:
    """iterdescendants('table'): whether a table is a wrapper."""
    cdef tree.xmlNode* node = _next_in(table, table)
    while node != NULL:
        if _read_kind(node) == TABLE:
            return True
        node = _next_in(node, table)
    return False


cdef tree.xmlNode* _nearest_table(tree.xmlNode* node):
    node = node.parent
    while node != NULL and node.type == tree.XML_ELEMENT_NODE:
        if node.ns == NULL and strcmp(<const char*> node.name, "table") == 0:
            return node
        node = node.parent
    return NULL


cdef int _walk(tree.xmlNode* top, bint cell, list out, Buffer* buf, _Document doc, int depth) except -1:
    """_Renderer._walk: text into `buf`, a line into `out` at each line break, each table with no table
    inside it into `out` as an element (the renderer draws it), each wrapper's cells walked in their place.
    A cell (`cell`) gives only its content; any other top, itself and its tail."""
    cdef tree.xmlNode* node
    cdef tree.xmlNode* inner
    cdef int kind
    cdef bint descend
    if depth > MAX_WRAPPERS:
        raise Unread()
    if cell:
        node = top.children
        if node == NULL:
            return 0
    else:
        node = top
    while True:
        descend = False
        if _add_text(node, buf):
            pass
        elif node.type == tree.XML_ELEMENT_NODE:
            kind = _read_kind(node)
            if kind == SKIP or _hidden(node):
                pass  # nothing of it; its tail follows
            elif kind == TABLE:
                _flush(buf, out)
                if _holds_table(node):
                    inner = _next_in(node, node)
                    while inner != NULL:  # table.iter('td', 'th'), the cells whose nearest table is this one
                        if _kind(inner) == CELL and _nearest_table(inner) == node:
                            _flush(buf, out)
                            _walk(inner, True, out, buf, doc, depth + 1)
                            _flush(buf, out)
                        inner = _next_in(inner, node)
                else:
                    out.append(elementFactory(doc, node))
            elif kind == BLOCK or kind == CELL:
                _flush(buf, out)
                if node.children != NULL:
                    descend = True
                else:
                    _flush(buf, out)
            elif kind == BREAK:
                _flush(buf, out)
            else:
                descend = node.children != NULL
        elif node.type != tree.XML_COMMENT_NODE and node.type != tree.XML_PI_NODE:
            raise Unread()
        if descend:
            node = node.children
            continue
        # the next node: a sibling, else the parent's end (a block or cell ends its line there)
        while node != top and node.next == NULL:
            node = node.parent
            if node == top and cell:
                return 0
            kind = _kind(node)
            if kind == BLOCK or kind == CELL:
                _flush(buf, out)
        if node == top:
            break
        node = node.next
    node = top.next  # the top's tail
    while node != NULL and _add_text(node, buf):
        node = node.next
    return 0


def walk(_Element root not None):
    """_Renderer.render's walk of the document: a list of its lines of text and of the tables to draw, in
    document order; None when the Python walk must read the document."""
    cdef Buffer buf
    cdef list out = []
    buf.data = NULL
    buf.size = buf.cap = 0
    try:
        _walk(root._c_node, False, out, &buf, root._doc, 0)
        _flush(&buf, out)
        return out
    except Unread:
        return None
    finally:
        free(buf.data)


# A row's marker cells joined to their numbers (html._merge_markers): a 10-K prints '$' in a cell of its own
# before most amounts, so this runs on tens of thousands of rows, at a few microseconds a row in Python.

cdef bint _digit(str text):
    """numbers.ANY_DIGIT.search: a decimal digit anywhere (re's \\d in a str pattern is Py_UNICODE_ISDECIMAL)."""
    cdef Py_UCS4 ch
    for ch in text:
        if ch.isdecimal():
            return True
    return False


cdef bint _joins_right(str text):
    """text in html._JOIN_RIGHT: '$', '(', '($', '$('."""
    cdef Py_ssize_t n = len(text)
    if n == 1:
        return text[0] == u"$" or text[0] == u"("
    return n == 2 and ((text[0] == u"(" and text[1] == u"$") or (text[0] == u"$" and text[1] == u"("))


cdef bint _joins_left(str text):
    """html._JOIN_LEFT.match: ')', '%', ')%', '%)', '(' a-z ')', or one or more '*'; as re's '$', a single
    line feed may end it."""
    cdef Py_ssize_t n = len(text), i
    if n and text[n - 1] == u"\n":
        n -= 1
    if n == 0:
        return False
    if text[0] == u"*":
        for i in range(1, n):
            if text[i] != u"*":
                return False
        return True
    if n == 1:
        return text[0] == u")" or text[0] == u"%"
    if n == 2:
        return (text[0] == u")" and text[1] == u"%") or (text[0] == u"%" and text[1] == u")")
    return n == 3 and text[0] == u"(" and u"a" <= text[1] <= u"z" and text[2] == u")"


cdef bint _range_dash(str text):
    """text in html._RANGE_DASHES: '-', an en dash, 'to'."""
    return text == u"-" or text == u"\u2013" or text == u"to"


cdef bint _range_mark(str text):
    """Whether the text holds '%', '$' or '.' (a range of percentages, amounts or decimals)."""
    return u"%" in text or u"$" in text or u"." in text


cdef Py_ssize_t _filled(list texts, Py_ssize_t* at):
    """The indexes of the row's cells holding text, into `at`; their count."""
    cdef Py_ssize_t i, n = 0
    for i in range(len(texts)):
        if len(<str> texts[i]):
            at[n] = i
            n += 1
    return n


def merge_markers(list texts not None):
    """html._merge_markers of a row's cell texts, in place: the same three passes, each over the cells holding
    text when it starts."""
    cdef Py_ssize_t count, n, i, before, after
    cdef Py_ssize_t* filled = <Py_ssize_t*> malloc(max(len(texts), 1) * sizeof(Py_ssize_t))
    cdef str text
    if filled == NULL:
        raise MemoryError()
    try:
        count = _filled(texts, filled)
        for n in range(count - 1):  # _join_right
            i = filled[n]
            text = texts[i]
            if _joins_right(text) and _digit(texts[filled[n + 1]]):
                after = filled[n + 1]
                texts[after] = (text + u" " + texts[after]) if text == u"$" else text + texts[after]
                texts[i] = u""
        count = _filled(texts, filled)
        for n in range(1, count):  # _join_left
            i = filled[n]
            text = texts[i]
            if not _joins_left(text):
                continue
            before = filled[n - 1]
            if text[0] == u")" or text[0] == u"%":
                if _digit(texts[before]):
                    texts[before] = texts[before] + text
                    texts[i] = u""
            else:  # a footnote mark
                texts[before] = texts[before] + u" " + text
                texts[i] = u""
        count = _filled(texts, filled)
        for n in range(1, count - 1):  # _join_ranges
            before, i, after = filled[n - 1], filled[n], filled[n + 1]
            text = texts[i]
            if (
                _range_dash(text)
                and _digit(texts[before])
                and _digit(texts[after])
                and (text == u"to" or _range_mark(texts[before]) or _range_mark(texts[after]))
            ):
                texts[after] = texts[before] + u" " + text + u" " + texts[after]
                texts[i] = texts[before] = u""
    finally:
        free(filled)


def draw(list rows not None):
    """html._draw_rows: the rows' marker cells joined (merge_markers), then the table laid out over its logical
    columns, each row a line of tab-separated texts; None when it holds no data. One pass of C over the cells
    where Python sorted, indexed and joined through sets and dicts."""
    cdef Py_ssize_t width = 0, k, n, col, span, c, count, first, tab, ncols = 0
    cdef object row
    cdef list texts, cols, spans, slots
    cdef list lines = []
    cdef dict wide = {}
    cdef str text, line
    cdef bint filled
    cdef char* kept = NULL
    cdef Py_ssize_t* index = NULL
    for row in rows:  # the arrays below are indexed unchecked: the rows must be as html._rows makes them
        texts, cols, spans = row.texts, row.cols, row.spans
        if len(cols) != len(texts) or len(spans) != len(texts):
            raise ValueError("a row's texts, columns and spans differ in number")
        n = 0  # where the row's next cell may start: each starts at or past the one before and its span
        for k in range(len(texts)):
            col, span = cols[k], spans[k]
            if col < n or span < 1:
                raise ValueError(f"a cell at column {col} spanning {span} overlaps the one before it")
            n = col + span
        width = max(width, n)
        if texts:
            merge_markers(texts)
    kept = <char*> calloc(width + 1, 1)
    index = <Py_ssize_t*> malloc((width + 1) * sizeof(Py_ssize_t))
    try:
        if kept == NULL or index == NULL:
            raise MemoryError()
        for row in rows:  # a logical column: where some single-column cell has text
            texts, cols, spans = row.texts, row.cols, row.spans
            for k in range(len(texts)):
                if <Py_ssize_t> spans[k] == 1 and len(<str> texts[k]):
                    kept[<Py_ssize_t> cols[k]] = 1
        for row in rows:  # a wider cell with text over none of them keeps its first column
            texts, cols, spans = row.texts, row.cols, row.spans
            for k in range(len(texts)):
                span = spans[k]
                if span > 1 and len(<str> texts[k]):
                    col = cols[k]
                    for c in range(col, col + span):
                        if kept[c]:
                            break
                    else:
                        kept[col] = 1
        for c in range(width):
            if kept[c]:
                index[c] = ncols
                ncols += 1
        if ncols < 2:
            return None
        for row in rows:
            texts, cols, spans = row.texts, row.cols, row.spans
            slots = [u""] * ncols
            filled = False
            for k in range(len(texts)):
                text = texts[k]
                if not len(text):
                    continue
                filled = True
                col, span = cols[k], spans[k]
                if span == 1:
                    slots[index[col]] = text
                    continue
                first, count = -1, 0
                for c in range(col, col + span):
                    if kept[c]:
                        if first < 0:
                            first = index[c]
                        count += 1
                slots[first] = text
                if count > 1:
                    wide[len(lines), first] = count
            if filled:
                lines.append(u"\t".join(slots).rstrip(u"\t"))
        for line in lines:  # data: a digit past some line's first cell
            tab = line.find(u"\t")
            if tab >= 0 and _digit(line[tab:]):
                return lines, ncols, wide
        return None
    finally:
        free(kept)
        free(index)


def paragraphs(_Element table not None, object python_one_line):
    """The lines of a layout table (one table_grid found no data in: a bullet and its paragraph), as
    _Renderer._draw reads them: each visible row's cells' texts (html._cell_text) joined by a space; None when the
    Python reading must read it."""
    cdef tree.xmlNode* top = table._c_node
    cdef tree.xmlNode* node = _next_in(top, top)
    cdef tree.xmlNode* cell
    cdef Buffer buf
    cdef list lines = [], texts
    cdef str text, line
    buf.data = NULL
    buf.size = buf.cap = 0
    try:
        node = _visible_row(node, top)
        while node != NULL:
            texts = []
            cell = _cell_from(node.children)
            while cell != NULL:
                text = _cell_line(cell, &buf, python_one_line)
                if text:
                    texts.append(text)
                cell = _cell_from(cell.next)
            line = u" ".join(texts)
            if line:
                lines.append(line)
            node = _visible_row(_next_in(node, top), top)
        return lines
    except Unread:
        return None
    finally:
        free(buf.data)
