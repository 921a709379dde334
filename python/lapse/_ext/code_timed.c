/* The timed code of a plain function (CPython 3.11 to 3.13).
 *
 * ext_code_timed(code, marks, name) returns a copy of a function's code object that
 * begins the span right after its RESUME (-marks) and keeps the token at the
 * bottom of its value stack for the whole body; that ends it (marks ^ token)
 * before each return; and that, from a handler covering the body wherever the code
 * has no handler of its own, ends it on the way out of an exception and re-raises
 * the exception from the instruction it was raised at (RERAISE with lasti: the
 * traceback is unchanged). The function stays a plain function, so the
 * interpreter keeps inlining its calls: no C frame per call, and the recursion
 * limit counts what it counts without lapse.
 *
 *   after RESUME:        LOAD_GLOBAL marks UNARY_NEGATIVE          -> [token]
 *   before RETURN_VALUE: SWAP 2 LOAD_GLOBAL marks SWAP 2 BINARY_OP ^ POP_TOP
 *                        ([token, value] -> [value, marks, token] -> [value])
 *   before RETURN_CONST: LOAD_GLOBAL marks SWAP 2 BINARY_OP ^ POP_TOP
 *   the handler:         SWAP 3 LOAD_GLOBAL marks SWAP 2 BINARY_OP ^ POP_TOP
 *                        SWAP 2 RERAISE 1 ([token, lasti, exc] -> [lasti, exc])
 *
 * The marks are loaded by `name`, which a session puts in the builtins module
 * (the user's globals stay as they are), not as a constant: a tracer of bytecode
 * takes what LOAD_CONST loads for a literal (torch.compile's Dynamo raised on a
 * SpanMarks there), while a callable it finds among the builtins is an object it
 * does not know, whose operators it graph-breaks on and runs eagerly.
 * None of these instructions checks for pending signals, and the marks' slots
 * never fail: the token is on the stack from the instruction after RESUME's
 * prologue to the end mark, and nothing can raise in between (the LOAD_GLOBAL
 * finds its name: plain_functions.c switches a function to its timed code only
 * where its globals and builtins give the marks).
 *
 * Everything else is the code's own: each instruction is copied with its argument
 * and inline caches, each jump aimed at the same instruction (EXTENDED_ARG
 * prefixes recomputed), the exception table's entries shifted (their stack depth
 * one more: the token), the positions of every instruction kept (inserted ones
 * have none, or the return's own); `name` appended to co_names, and the marks and
 * the code itself (what a session gives back) to co_consts (where no instruction
 * loads them). The code made is decoded again and checked against the layout
 * meant. Which opcodes carry inline caches and which jump backward is read once
 * from the `opcode` module. */
#include "ext.h"

#include <opcode.h>
#include <stdlib.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000

#define CO_NOT_PLAIN (CO_GENERATOR | CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR)
#define JUMP_FORWARD_REL 1
#define JUMP_BACKWARD_REL 2

static int load_metadata(void);

static unsigned char cache_units[256]; /* inline cache units after each opcode */
static unsigned char jump_kind[256];   /* JUMP_FORWARD_REL, JUMP_BACKWARD_REL or 0 */
static int metadata_ready;             /* 0 where this CPython's could not be read */

static int fail(const char *why)
{
    PyErr_Format(PyExc_ValueError, "lapse: %s", why);
    return -1;
}

/* cache_units and jump_kind from opcode._inline_cache_entries (3.11, 3.12: by
 * opcode; 3.13: by name), opcode.hasjrel and opcode.opname: at import, so that
 * making timed code later runs no Python code. Where they cannot be read, no
 * timed code is made (ext_code_timed says why). */
int ext_code_timed_init(void)
{
    if (load_metadata() < 0)
        PyErr_Clear();
    return 0;
}

static int load_metadata(void)
{
    PyObject *opcode = PyImport_ImportModule("opcode");
    if (!opcode)
        return -1;
    PyObject *caches = PyObject_GetAttrString(opcode, "_inline_cache_entries");
    PyObject *hasjrel = PyObject_GetAttrString(opcode, "hasjrel");
    PyObject *hasjabs = PyObject_GetAttrString(opcode, "hasjabs");
    PyObject *opname = PyObject_GetAttrString(opcode, "opname");
    Py_DECREF(opcode);
    int rc = caches && hasjrel && hasjabs && opname ? 0 : -1;
    Py_ssize_t by_opcode = rc == 0 && !PyDict_Check(caches) ? PySequence_Length(caches) : 0;
    for (int op = 0; rc == 0 && op < 256; op++) {
        PyObject *n = NULL;
        if (PyDict_Check(caches)) {
            PyObject *name = PySequence_GetItem(opname, op);
            n = name ? PyDict_GetItemWithError(caches, name) : NULL;
            Py_XINCREF(n);
            Py_XDECREF(name);
        } else if (op < by_opcode) {
            n = PySequence_GetItem(caches, op);
        }
        long units = n ? PyLong_AsLong(n) : 0;
        Py_XDECREF(n);
        if (PyErr_Occurred())
            rc = -1;
        else if (units < 0 || units > 32)
            rc = fail("odd inline cache sizes");
        cache_units[op] = (unsigned char)units;
    }
    Py_ssize_t njumps = rc == 0 ? PySequence_Length(hasjrel) : -1;
    for (Py_ssize_t i = 0; rc == 0 && i < njumps; i++) {
        PyObject *item = PySequence_GetItem(hasjrel, i);
        long op = item ? PyLong_AsLong(item) : -1;
        Py_XDECREF(item);
        if (PyErr_Occurred()) {
            rc = -1;
            break;
        }
        if (op < 0 || op > 255)
            continue; /* pseudo-instructions: never in co_code */
        PyObject *name = PySequence_GetItem(opname, op);
        const char *utf8 = name ? PyUnicode_AsUTF8(name) : NULL;
        if (!utf8)
            rc = -1;
        else
            jump_kind[op] = strstr(utf8, "BACKWARD") ? JUMP_BACKWARD_REL : JUMP_FORWARD_REL;
        Py_XDECREF(name);
    }
    if (rc == 0 && PySequence_Length(hasjabs) != 0)
        rc = PyErr_Occurred() ? -1 : fail("absolute jumps in this CPython");
    Py_XDECREF(caches);
    Py_XDECREF(hasjrel);
    Py_XDECREF(hasjabs);
    Py_XDECREF(opname);
    if (rc == 0)
        metadata_ready = 1;
    return rc;
}

/* An instruction of the code read: [start, next) its units, prefixes and caches
 * included; `at` the unit of its opcode. */
typedef struct {
    int start, at, next, op, arg;
} read_ins;

/* Decodes co_code into ins (room for units entries); returns their count, or -1. */
static int decode(const unsigned char *code, int units, read_ins *ins)
{
    int n = 0, start = 0;
    unsigned ext = 0;
    for (int u = 0; u < units;) {
        int op = code[2 * u];
        unsigned arg = code[2 * u + 1] | (ext << 8);
        if (ext >= 1u << 22)
            return fail("an argument too large");
        if (op == EXTENDED_ARG) {
            ext = arg;
            u++;
            continue;
        }
        int next = u + 1 + cache_units[op];
        if (next > units)
            return fail("an instruction runs past the end of the code");
        ins[n++] = (read_ins){start, u, next, op, (int)arg};
        u = start = next;
        ext = 0;
    }
    if (start != units)
        return fail("EXTENDED_ARG at the end of the code");
    return n;
}

static int jump_target(const read_ins *i)
{
    int base = i->next; /* the unit after the jump and its caches */
    return jump_kind[i->op] == JUMP_BACKWARD_REL ? base - i->arg : base + i->arg;
}

/* An instruction of the code made. */
typedef struct {
    int op, arg, caches;
    int target;   /* a jump: the index (in the layout) of the instruction it lands on */
    int pos;      /* the unit of the code read whose position it has; -1: none */
    int ext, at;  /* placed: its EXTENDED_ARG prefixes, its first unit */
} new_ins;

typedef struct {
    new_ins *v;
    int n, cap;
} layout;

static int emit(layout *l, int op, int arg, int pos)
{
    if (l->n == l->cap)
        return fail("layout overflow");
    l->v[l->n++] = (new_ins){op, arg, cache_units[op], -1, pos, 0, 0};
    return 0;
}

/* [..] -> [.., marks]: the marks from the builtins, by the name at names[name_k] */
static int emit_marks(layout *l, int name_k, int pos)
{
    return emit(l, LOAD_GLOBAL, name_k << 1, pos); /* the low bit: no NULL pushed */
}

/* [.., token] -> [..]: marks ^ token */
static int emit_end(layout *l, int name_k, int pos)
{
    if (emit_marks(l, name_k, pos) < 0 || emit(l, SWAP, 2, pos) < 0 ||
        emit(l, BINARY_OP, NB_XOR, pos) < 0)
        return -1;
    return emit(l, POP_TOP, 0, pos);
}

static int ext_count(int arg)
{
    return arg < (1 << 8) ? 0 : arg < (1 << 16) ? 1 : arg < (1 << 24) ? 2 : 3;
}

/* Places the layout: EXTENDED_ARG prefixes only grow, so this settles. Returns the
 * units of the code made. */
static int place(layout *l)
{
    for (int i = 0; i < l->n; i++)
        l->v[i].ext = l->v[i].target < 0 ? ext_count(l->v[i].arg) : 0;
    for (;;) {
        int at = 0, grew = 0;
        for (int i = 0; i < l->n; i++) {
            l->v[i].at = at;
            at += l->v[i].ext + 1 + l->v[i].caches;
        }
        for (int i = 0; i < l->n; i++) {
            new_ins *j = &l->v[i];
            if (j->target < 0)
                continue;
            int base = j->at + j->ext + 1 + j->caches, to = l->v[j->target].at;
            j->arg = jump_kind[j->op] == JUMP_BACKWARD_REL ? base - to : to - base;
            if (j->arg < 0)
                return fail("a jump would turn around");
            if (ext_count(j->arg) > j->ext) {
                j->ext = ext_count(j->arg);
                grew = 1;
            }
        }
        if (!grew)
            return at;
    }
}

/* ---- the exception table: entries of varints, 6 bits each, most significant
 * first, 0x40 on all but the last, 0x80 on an entry's first byte ---- */

typedef struct {
    int start, end, target, depth, lasti; /* units; end exclusive */
} exc_entry;

static int exc_item(const unsigned char *t, Py_ssize_t len, Py_ssize_t *i, int *value)
{
    if (*i >= len)
        return -1;
    unsigned b = t[(*i)++];
    unsigned v = b & 0x3F;
    while (b & 0x40) {
        if (*i >= len || v > (1u << 24))
            return -1;
        b = t[(*i)++];
        v = (v << 6) | (b & 0x3F);
    }
    *value = (int)v;
    return 0;
}

/* Parses the table into out (room for len entries); returns the count or -1. */
static int exc_parse(const unsigned char *t, Py_ssize_t len, exc_entry *out)
{
    int n = 0;
    for (Py_ssize_t i = 0; i < len;) {
        int start, size, target, dl;
        if (!(t[i] & 0x80) || exc_item(t, len, &i, &start) < 0 ||
            exc_item(t, len, &i, &size) < 0 || exc_item(t, len, &i, &target) < 0 ||
            exc_item(t, len, &i, &dl) < 0)
            return fail("an exception table it cannot read");
        out[n++] = (exc_entry){start, start + size, target, dl >> 1, dl & 1};
    }
    return n;
}

static void exc_put(unsigned char *out, Py_ssize_t *n, int value, int first)
{
    int shift = 0;
    while (shift < 24 && value >> (shift + 6))
        shift += 6;
    for (; shift >= 0; shift -= 6) {
        unsigned b = (value >> shift) & 0x3F;
        if (shift)
            b |= 0x40;
        if (first)
            b |= 0x80;
        first = 0;
        out[(*n)++] = (unsigned char)b;
    }
}

/* ---- positions: one (line, end line, column, end column) per code unit, -1 for
 * none, encoded in the long form of the location table (or as no location) ---- */

static void loc_varint(unsigned char *out, Py_ssize_t *n, unsigned v)
{
    while (v >= 0x40) {
        out[(*n)++] = (unsigned char)(0x40 | (v & 0x3F));
        v >>= 6;
    }
    out[(*n)++] = (unsigned char)v;
}

static void loc_svarint(unsigned char *out, Py_ssize_t *n, int v)
{
    loc_varint(out, n, v < 0 ? ((unsigned)-v << 1) | 1 : (unsigned)v << 1);
}

/* positions of the code read, from co_positions(); -1 for None */
static int read_positions(PyObject *code, int units, int (*pos)[4])
{
    PyObject *it = PyObject_CallMethod(code, "co_positions", NULL);
    PyObject *iter = it ? PyObject_GetIter(it) : NULL;
    Py_XDECREF(it);
    if (!iter)
        return -1;
    int n = 0;
    PyObject *p;
    while ((p = PyIter_Next(iter)) != NULL) {
        if (n < units && PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 4) {
            for (int k = 0; k < 4; k++) {
                PyObject *v = PyTuple_GET_ITEM(p, k);
                pos[n][k] = v == Py_None ? -1 : (int)PyLong_AsLong(v);
            }
        }
        n++;
        Py_DECREF(p);
    }
    Py_DECREF(iter);
    if (PyErr_Occurred())
        return -1;
    return n == units ? 0 : fail("positions that do not cover the code");
}

static const int no_position[4] = {-1, -1, -1, -1};

/* The location table of the layout placed; out has room for 25 bytes a unit. */
static Py_ssize_t loc_table(const layout *l, int (*pos)[4], int first_line, unsigned char *out)
{
    Py_ssize_t n = 0;
    int line = first_line;
    const int *run = NULL;
    int run_units = 0;
    for (int i = 0; i <= l->n; i++) {
        const int *p = NULL;
        int units = 0;
        if (i < l->n) {
            p = l->v[i].pos >= 0 ? pos[l->v[i].pos] : no_position;
            units = l->v[i].ext + 1 + l->v[i].caches;
        }
        if (run && p && memcmp(run, p, sizeof(int[4])) == 0) {
            run_units += units;
            continue;
        }
        while (run && run_units > 0) { /* the run so far, 8 units an entry at most */
            int len = run_units < 8 ? run_units : 8;
            run_units -= len;
            if (run[0] < 0) {
                out[n++] = (unsigned char)(0x80 | (15 << 3) | (len - 1));
                continue;
            }
            out[n++] = (unsigned char)(0x80 | (14 << 3) | (len - 1));
            int end_line = run[1] < 0 ? run[0] : run[1];
            loc_svarint(out, &n, run[0] - line);
            loc_varint(out, &n, (unsigned)(end_line - run[0]));
            loc_varint(out, &n, (unsigned)(run[2] + 1));
            loc_varint(out, &n, (unsigned)(run[3] + 1));
            line = run[0];
        }
        run = p;
        run_units = units;
    }
    return n;
}

/* ---- the timed code ---- */

static PyObject *replace_code(PyObject *code, PyObject *bytes, PyObject *consts, PyObject *names,
                              int stacksize, PyObject *lines, PyObject *exceptions)
{
    PyObject *replace = PyObject_GetAttrString(code, "replace");
    PyObject *args = PyTuple_New(0);
    PyObject *kw = Py_BuildValue("{sOsOsOsisOsO}", "co_code", bytes, "co_consts", consts,
                                 "co_names", names, "co_stacksize", stacksize, "co_linetable",
                                 lines, "co_exceptiontable", exceptions);
    PyObject *made = replace && args && kw ? PyObject_Call(replace, args, kw) : NULL;
    Py_XDECREF(replace);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    return made;
}

/* The code made must decode to the layout placed. */
static int check(PyObject *made, const layout *l)
{
    PyObject *bytes = PyObject_GetAttrString(made, "co_code");
    if (!bytes)
        return -1;
    int units = (int)(PyBytes_GET_SIZE(bytes) / 2);
    read_ins *got = PyMem_Malloc(sizeof(read_ins) * (size_t)(units + 1));
    int n = got ? decode((const unsigned char *)PyBytes_AS_STRING(bytes), units, got) : -1;
    int rc = n == l->n ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        const new_ins *want = &l->v[i];
        if (got[i].op != want->op || got[i].arg != want->arg || got[i].start != want->at ||
            (want->target >= 0 && jump_target(&got[i]) != l->v[want->target].at))
            rc = -1;
    }
    PyMem_Free(got);
    Py_DECREF(bytes);
    if (rc < 0 && !PyErr_Occurred())
        fail("the timed code does not read back as laid out");
    return rc;
}

PyObject *ext_code_timed(PyObject *code, PyObject *marks, PyObject *marks_name)
{
    if (!PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "lapse: timed code is made from a code object");
        return NULL;
    }
    PyCodeObject *co = (PyCodeObject *)code;
    if (co->co_flags & CO_NOT_PLAIN) {
        fail("a generator or coroutine is timed by a wrapper, not in its code");
        return NULL;
    }
    if (!metadata_ready) {
        fail("the opcode module of this CPython could not be read");
        return NULL;
    }
    PyObject *bytes = PyObject_GetAttrString(code, "co_code");
    PyObject *consts = PyObject_GetAttrString(code, "co_consts");
    PyObject *table = PyObject_GetAttrString(code, "co_exceptiontable");
    PyObject *names = PyObject_GetAttrString(code, "co_names");
    PyObject *made = NULL, *new_bytes = NULL, *new_consts = NULL, *new_names = NULL,
             *new_lines = NULL, *new_table = NULL;
    read_ins *ins = NULL;
    int *first_of = NULL, *copy_of = NULL, *index_at = NULL, (*pos)[4] = NULL;
    exc_entry *entries = NULL;
    layout l = {NULL, 0, 0};
    unsigned char *out = NULL;
    if (!bytes || !consts || !table || !names || !PyBytes_Check(bytes) || !PyTuple_Check(consts) ||
        !PyBytes_Check(table) || !PyTuple_Check(names))
        goto done;
    int units = (int)(PyBytes_GET_SIZE(bytes) / 2);
    Py_ssize_t table_len = PyBytes_GET_SIZE(table);
    ins = PyMem_Malloc(sizeof(read_ins) * (size_t)(units + 1));
    first_of = PyMem_Malloc(sizeof(int) * (size_t)(units + 1));
    copy_of = PyMem_Malloc(sizeof(int) * (size_t)(units + 1));
    index_at = PyMem_Malloc(sizeof(int) * (size_t)(units + 1));
    pos = PyMem_Malloc(sizeof(int[4]) * (size_t)(units + 1));
    entries = PyMem_Malloc(sizeof(exc_entry) * (size_t)(2 * table_len + 2));
    l.cap = 6 * units + 32; /* each instruction, and at most 5 inserted before it */
    l.v = PyMem_Malloc(sizeof(new_ins) * (size_t)l.cap);
    if (!ins || !first_of || !copy_of || !index_at || !pos || !entries || !l.v) {
        PyErr_NoMemory();
        goto done;
    }
    int n = decode((const unsigned char *)PyBytes_AS_STRING(bytes), units, ins);
    if (n < 0 || read_positions(code, units, pos) < 0)
        goto done;
    for (int u = 0; u <= units; u++)
        index_at[u] = -1;
    for (int i = 0; i < n; i++)
        index_at[ins[i].start] = i;
    int resume = 0;
    while (resume < n && (ins[resume].op == MAKE_CELL || ins[resume].op == COPY_FREE_VARS))
        resume++;
    if (resume == n || ins[resume].op != RESUME) {
        fail("no RESUME where a function's code starts");
        goto done;
    }

    Py_ssize_t nconsts = PyTuple_GET_SIZE(consts), nnames = PyTuple_GET_SIZE(names);
    int name_k = (int)nnames;
    for (int i = 0; i <= resume; i++) {
        first_of[i] = copy_of[i] = l.n;
        if (emit(&l, ins[i].op, ins[i].arg, ins[i].at) < 0)
            goto done;
    }
    if (emit_marks(&l, name_k, -1) < 0 || emit(&l, UNARY_NEGATIVE, 0, -1) < 0)
        goto done;
    int body_first = l.n;
    for (int i = resume + 1; i < n; i++) {
        first_of[i] = l.n;
        int op = ins[i].op;
#ifdef RETURN_CONST
        int returns = op == RETURN_VALUE || op == RETURN_CONST;
#else
        int returns = op == RETURN_VALUE;
#endif
        if (op == RESUME || op == YIELD_VALUE || op == RETURN_GENERATOR) {
            fail("a RESUME or a yield inside a plain function");
            goto done;
        }
        if (op == RETURN_VALUE && emit(&l, SWAP, 2, ins[i].at) < 0)
            goto done;
        if (returns && emit_end(&l, name_k, ins[i].at) < 0)
            goto done;
        copy_of[i] = l.n;
        if (emit(&l, op, ins[i].arg, ins[i].at) < 0)
            goto done;
    }
    int handler = l.n;
    if (emit(&l, SWAP, 3, -1) < 0 || emit_end(&l, name_k, -1) < 0 ||
        emit(&l, SWAP, 2, -1) < 0 || emit(&l, RERAISE, 1, -1) < 0)
        goto done;
    for (int i = 0; i < n; i++) {
        if (!jump_kind[ins[i].op])
            continue;
        int to = jump_target(&ins[i]);
        int k = to >= 0 && to < units ? index_at[to] : -1;
        if (k <= resume) {
            fail("a jump that lands inside an instruction or before the body");
            goto done;
        }
        l.v[copy_of[i]].target = first_of[k];
    }
    int total = place(&l);
    if (total < 0)
        goto done;

    /* co_code */
    new_bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total * 2);
    if (!new_bytes)
        goto done;
    unsigned char *c = (unsigned char *)PyBytes_AS_STRING(new_bytes);
    memset(c, 0, (size_t)total * 2);
    for (int i = 0; i < l.n; i++) {
        const new_ins *j = &l.v[i];
        unsigned char *at = c + 2 * j->at;
        for (int s = j->ext; s > 0; s--) {
            *at++ = EXTENDED_ARG;
            *at++ = (unsigned char)((j->arg >> (8 * s)) & 0xFF);
        }
        at[0] = (unsigned char)j->op;
        at[1] = (unsigned char)(j->arg & 0xFF);
    }

    /* the exception table: the code's own entries, then the handler in the gaps */
    int nexc = exc_parse((const unsigned char *)PyBytes_AS_STRING(table), table_len, entries);
    if (nexc < 0)
        goto done;
    for (int e = 0; e < nexc; e++) {
        int *ends[3] = {&entries[e].start, &entries[e].end, &entries[e].target};
        for (int k = 0; k < 3; k++) {
            int u = *ends[k];
            int i = u >= 0 && u < units ? index_at[u] : -1;
            if (u == units)
                *ends[k] = l.v[handler].at;
            else if (i > resume)
                *ends[k] = l.v[first_of[i]].at;
            else {
                fail("an exception table entry outside the body's instructions");
                goto done;
            }
        }
        entries[e].depth++;
        if (entries[e].end < entries[e].start || (e && entries[e].start < entries[e - 1].end)) {
            fail("an exception table out of order");
            goto done;
        }
    }
    /* 4 items of up to 5 bytes an exception entry; up to 25 bytes a position entry */
    out = PyMem_Malloc((size_t)(nexc * 2 + 2) * 20 + (size_t)total * 25 + 64);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t tn = 0;
    int covered = l.v[body_first].at;
    for (int e = 0; e <= nexc; e++) {
        int next_start = e < nexc ? entries[e].start : l.v[handler].at;
        exc_entry gap = {covered, next_start, l.v[handler].at, 1, 1};
        const exc_entry *put[2] = {next_start > covered ? &gap : NULL, e < nexc ? &entries[e] : NULL};
        for (int k = 0; k < 2; k++) {
            if (!put[k])
                continue;
            exc_put(out, &tn, put[k]->start, 1);
            exc_put(out, &tn, put[k]->end - put[k]->start, 0);
            exc_put(out, &tn, put[k]->target, 0);
            exc_put(out, &tn, (put[k]->depth << 1) | put[k]->lasti, 0);
        }
        if (e < nexc && entries[e].end > covered)
            covered = entries[e].end;
    }
    new_table = PyBytes_FromStringAndSize((const char *)out, tn);
    Py_ssize_t ln = loc_table(&l, pos, co->co_firstlineno, out);
    new_lines = PyBytes_FromStringAndSize((const char *)out, ln);
    new_consts = PyTuple_New(nconsts + 2);
    new_names = PyTuple_New(nnames + 1);
    if (!new_table || !new_lines || !new_consts || !new_names)
        goto done;
    for (Py_ssize_t k = 0; k < nnames; k++) {
        PyObject *v = PyTuple_GET_ITEM(names, k);
        Py_INCREF(v);
        PyTuple_SET_ITEM(new_names, k, v);
    }
    Py_INCREF(marks_name);
    PyTuple_SET_ITEM(new_names, nnames, marks_name);
    for (Py_ssize_t k = 0; k < nconsts; k++) {
        PyObject *v = PyTuple_GET_ITEM(consts, k);
        Py_INCREF(v);
        PyTuple_SET_ITEM(new_consts, k, v);
    }
    Py_INCREF(marks);
    PyTuple_SET_ITEM(new_consts, nconsts, marks);
    Py_INCREF(code);
    PyTuple_SET_ITEM(new_consts, nconsts + 1, code);
    int stacksize = co->co_stacksize + 1 > 4 ? co->co_stacksize + 1 : 4;
    made = replace_code(code, new_bytes, new_consts, new_names, stacksize, new_lines, new_table);
    if (made && check(made, &l) < 0)
        Py_CLEAR(made);

done:
    Py_XDECREF(bytes);
    Py_XDECREF(consts);
    Py_XDECREF(table);
    Py_XDECREF(new_bytes);
    Py_XDECREF(new_consts);
    Py_XDECREF(new_names);
    Py_XDECREF(names);
    Py_XDECREF(new_lines);
    Py_XDECREF(new_table);
    PyMem_Free(ins);
    PyMem_Free(first_of);
    PyMem_Free(copy_of);
    PyMem_Free(index_at);
    PyMem_Free(pos);
    PyMem_Free(entries);
    PyMem_Free(l.v);
    PyMem_Free(out);
    if (!made && !PyErr_Occurred())
        fail("timed code could not be made");
    return made;
}

#else

int ext_code_timed_init(void) { return 0; }

PyObject *ext_code_timed(PyObject *code, PyObject *marks, PyObject *marks_name)
{
    (void)code;
    (void)marks;
    (void)marks_name;
    PyErr_SetString(PyExc_ValueError, "lapse: no bytecode layout known for this CPython");
    return NULL;
}

#endif
