/* Where CPython keeps what the external reader needs: byte offsets into its
 * runtime, interpreter, thread, frame, code and string structures, for one
 * minor version. 3.11 and 3.12 come from tables generated against that
 * version's internal headers (py_layout_311.c, py_layout_312.c, written by
 * gen_layouts.sh); 3.13 from the _Py_DebugOffsets block at the start of the
 * target's _PyRuntime (py_layout_debug.c). */
#ifndef LAPSE_PYREAD_PY_LAYOUT_H
#define LAPSE_PYREAD_PY_LAYOUT_H

#include <stdint.h>

/* How the GIL holder is found. */
enum py_gil_mode {
    PY_GIL_NONE = 0,
    PY_GIL_RUNTIME_TSTATE = 1, /* 3.11: _PyRuntime.gilstate.tstate_current */
    PY_GIL_INTERP_POINTER = 2, /* 3.12: interp->ceval.gil -> struct _gil_runtime_state */
    PY_GIL_INTERP_INLINE = 3,  /* 3.13: interp->_gil, a struct _gil_runtime_state */
};

/* How an instance keeps its attributes when its type has Py_TPFLAGS_MANAGED_DICT. */
enum py_managed_mode {
    PY_MANAGED_TWO_POINTERS = 1, /* 3.11: values pointer at obj-32, dict pointer at obj-24 */
    PY_MANAGED_TAGGED = 2,       /* 3.12: obj-24 holds a dict, or the values pointer less one (low bit set) */
    PY_MANAGED_INLINE_VALUES = 3 /* 3.13: dict pointer at obj-24; values inline after the
                                    object header (Py_TPFLAGS_INLINE_VALUES), with a valid flag */
};

/* Offsets for reading dicts, modules, ints and instance attributes: what thread names
 * need (sys.modules -> threading._active -> each Thread's _name). Generated from the
 * internal headers for each minor version (3.13's debug offsets lack most of them). */
typedef struct py_object_offsets {
    uint64_t interp_modules; /* PyInterpreterState: imports.modules (3.11: modules) */
    uint64_t object_size;    /* sizeof(PyObject) */
    uint64_t type_flags;     /* PyTypeObject.tp_flags */
    uint64_t type_cached_keys; /* PyHeapTypeObject.ht_cached_keys: a split table's shared keys */
    uint64_t flag_managed_dict;
    uint64_t flag_inline_values; /* 3.13; 0 before */
    int managed_mode;            /* enum py_managed_mode */
    uint64_t module_dict;        /* PyModuleObject.md_dict */
    uint64_t dict_keys, dict_values; /* PyDictObject.ma_keys, ma_values */
    uint64_t keys_log2_size, keys_log2_index_bytes, keys_kind, keys_nentries, keys_indices;
    uint64_t kind_general, kind_unicode, kind_split;
    uint64_t entry_size, entry_key, entry_value;                 /* PyDictKeyEntry */
    uint64_t unicode_entry_size, unicode_entry_key, unicode_entry_value; /* PyDictUnicodeEntry */
    uint64_t values_array;    /* PyDictValues.values */
    uint64_t values_capacity; /* 3.13: PyDictValues.capacity and .valid; 0 before */
    uint64_t values_valid;
    uint64_t long_tagged;     /* 1: long_size is lv_tag (digits << 3 | sign), 3.12+; 0: ob_size */
    uint64_t long_size, long_digits, long_shift;
} py_object_offsets;

typedef struct py_layout {
    int major, minor;
    /* _PyRuntimeState */
    uint64_t runtime_size;
    uint64_t runtime_interpreters_head;
    uint64_t runtime_tstate_current; /* PY_GIL_RUNTIME_TSTATE only */
    /* PyInterpreterState */
    uint64_t interp_size;
    uint64_t interp_id;
    uint64_t interp_next;
    uint64_t interp_threads_head;
    int gil_mode;
    uint64_t interp_gil;      /* offset of the pointer (INTERP_POINTER) or the struct (INLINE) */
    uint64_t gil_last_holder; /* offsets inside struct _gil_runtime_state */
    uint64_t gil_locked;
    /* PyThreadState */
    uint64_t tstate_size;
    uint64_t tstate_prev;
    uint64_t tstate_next;
    uint64_t tstate_interp;
    uint64_t tstate_thread_id;
    uint64_t tstate_native_thread_id;
    /* 3.11/3.12: tstate->cframe->current_frame; 3.13: tstate->current_frame */
    int has_cframe;
    uint64_t tstate_cframe;
    uint64_t cframe_current_frame;
    uint64_t tstate_current_frame;
    /* _PyInterpreterFrame */
    uint64_t frame_size; /* bytes before localsplus */
    uint64_t frame_previous;
    uint64_t frame_code; /* f_code (3.11/3.12) or f_executable (3.13) */
    uint64_t frame_instr; /* prev_instr (3.11/3.12) or instr_ptr (3.13): both point at the
                             instruction being executed (3.11/3.12: one unit before
                             the first in a frame not started yet) */
    uint64_t frame_owner;
    int owner_cstack; /* value of FRAME_OWNED_BY_CSTACK, or -1 where there is none (3.11) */
    /* PyCodeObject */
    uint64_t code_size;
    uint64_t code_filename;
    uint64_t code_name;
    uint64_t code_qualname;
    uint64_t code_linetable;
    uint64_t code_firstlineno;
    uint64_t code_adaptive; /* co_code_adaptive: the first code unit */
    /* co_version (3.12+): a per-interpreter counter that each new code object takes
     * (0 once it has run out), so a code object and a later one at the same address
     * differ in it; 0 where there is none (3.11) */
    uint64_t code_version;
    /* PyObject */
    uint64_t ob_type;
    /* PyUnicodeObject: state bits (kind, compact, ascii), length, data after the header */
    uint64_t unicode_state;
    uint64_t unicode_length;
    uint64_t unicode_ascii_size;   /* sizeof(PyASCIIObject): data of a compact ASCII string */
    uint64_t unicode_compact_size; /* sizeof(PyCompactUnicodeObject): data of other compact strings */
    /* PyBytesObject */
    uint64_t bytes_size;
    uint64_t bytes_ob_sval;
    py_object_offsets objects;
} py_layout;

/* The generated tables (py_layout_311.c, py_layout_312.c). */
extern const py_layout py_layout_3_11;
extern const py_layout py_layout_3_12;
/* py_objects_313.c: 3.13's object offsets, generated from its headers */
extern const py_object_offsets py_object_offsets_3_13;

/* The table for a minor version without debug offsets, or NULL. */
const py_layout *py_layout_for_table(int major, int minor);

/* Fill *out from a _Py_DebugOffsets block (the first bytes of the target's
 * _PyRuntime) of CPython 3.13. Returns 0, or -1 with a reason in why. */
int py_layout_from_debug_offsets(const unsigned char *block, uint64_t len, py_layout *out,
                                 char *why, int why_len);

/* Bytes of _PyRuntime to read for py_layout_from_debug_offsets. */
#define PY_DEBUG_OFFSETS_READ 640

#endif
