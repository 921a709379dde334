/* Span tags: the library a span belongs to (structure, not policy).
 *
 * lapse.register_opt_in_tag("mylib") makes the spans tagged "mylib" dormant unless
 * the run enables the tag (Profiler(enable_tags=...), LAPSE_ENABLE_TAGS, lapse run
 * --enable-tag). A tagged `with span(...)` then checks one byte more than an untagged
 * one; a tagged decorated function is not timed at all for the session, so a call
 * costs what a dormant call costs. */
#include "ext.h"

#include <string.h>

unsigned char ext_tag_dormant[EXT_TAGS_MAX];

static PyObject *tag_ids;   /* str -> its id (1 .. EXT_TAGS_MAX - 1) */
static PyObject *tag_names; /* list: id -> str (index 0: None, no tag) */
static PyObject *opt_in;    /* set of the opt-in tags */
static PyObject *enabled;   /* set of the tags the run enables */

int ext_tag_id(PyObject *tag, uint32_t *id)
{
    if (tag == NULL || tag == Py_None) {
        *id = 0;
        return 0;
    }
    if (!PyUnicode_Check(tag) || PyUnicode_GET_LENGTH(tag) == 0) {
        PyErr_Format(PyExc_TypeError, "lapse: a tag is a non-empty str, not %R", tag);
        return -1;
    }
    PyObject *found = PyDict_GetItemWithError(tag_ids, tag);
    if (found) {
        *id = (uint32_t)PyLong_AsUnsignedLong(found);
        return 0;
    }
    if (PyErr_Occurred())
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(tag_names);
    if (n >= EXT_TAGS_MAX) {
        PyErr_Format(PyExc_ValueError, "lapse: at most %d distinct span tags (%R is one more)",
                     EXT_TAGS_MAX - 1, tag);
        return -1;
    }
    PyObject *boxed = PyLong_FromSsize_t(n);
    int rc = boxed ? PyDict_SetItem(tag_ids, tag, boxed) : -1;
    Py_XDECREF(boxed);
    if (rc < 0 || PyList_Append(tag_names, tag) < 0)
        return -1;
    int on = PySet_Contains(opt_in, tag), off = PySet_Contains(enabled, tag);
    if (on < 0 || off < 0)
        return -1;
    ext_tag_dormant[n] = (unsigned char)(on && !off);
    *id = (uint32_t)n;
    return 0;
}

PyObject *ext_tag_name(uint32_t id)
{
    return Py_NewRef(id < (uint32_t)PyList_GET_SIZE(tag_names) ? PyList_GET_ITEM(tag_names, id)
                                                              : Py_None);
}

/* Recomputes which tags are dormant; the decorated functions follow (plain_functions.c). */
static int recompute(void)
{
    for (Py_ssize_t i = 1; i < PyList_GET_SIZE(tag_names); i++) {
        PyObject *tag = PyList_GET_ITEM(tag_names, i);
        int on = PySet_Contains(opt_in, tag), off = PySet_Contains(enabled, tag);
        if (on < 0 || off < 0)
            return -1;
        ext_tag_dormant[i] = (unsigned char)(on && !off);
    }
    return ext_plain_functions_retag();
}

static PyObject *py_register_opt_in(PyObject *self, PyObject *tag)
{
    (void)self;
    uint32_t id;
    if (tag == Py_None || ext_tag_id(tag, &id) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "lapse: a tag is a non-empty str, not None");
        return NULL;
    }
    if (PySet_Add(opt_in, tag) < 0 || recompute() < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* enable_tags(tags): the tags the run enables (replacing those it had) */
static PyObject *py_enable_tags(PyObject *self, PyObject *tags)
{
    (void)self;
    PyObject *fresh = PySet_New(tags);
    if (!fresh)
        return NULL;
    PyObject *it = PyObject_GetIter(fresh), *tag;
    while (it && (tag = PyIter_Next(it))) {
        int ok = PyUnicode_Check(tag) && PyUnicode_GET_LENGTH(tag) > 0;
        if (!ok)
            PyErr_Format(PyExc_TypeError, "lapse: a tag is a non-empty str, not %R", tag);
        Py_DECREF(tag);
        if (!ok)
            break;
    }
    Py_XDECREF(it);
    if (PyErr_Occurred()) {
        Py_DECREF(fresh);
        return NULL;
    }
    Py_SETREF(enabled, fresh);
    if (recompute() < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyMethodDef ext_tags_methods[] = {
    {"register_opt_in_tag", py_register_opt_in, METH_O,
     "register_opt_in_tag(tag): spans tagged `tag` are dormant unless a run enables it"},
    {"enable_tags", py_enable_tags, METH_O, "enable_tags(tags): the tags the run enables"},
    {NULL, NULL, 0, NULL},
};

int ext_tags_init(void)
{
    tag_ids = PyDict_New();
    tag_names = PyList_New(0);
    opt_in = PySet_New(NULL);
    enabled = PySet_New(NULL);
    if (!tag_ids || !tag_names || !opt_in || !enabled || PyList_Append(tag_names, Py_None) < 0)
        return -1;
    return 0;
}
