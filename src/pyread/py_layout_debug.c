/* The layout of a 3.13 target, read from the _Py_DebugOffsets block that CPython
 * puts at the start of _PyRuntime: a cookie "xdebugpy", the version, then tables of
 * uint64 offsets. The block's own layout is fixed within a minor version; this
 * reads the 3.13 one (Include/internal/pycore_runtime.h of 3.13). */
#include "py_layout.h"

#include <stdio.h>
#include <string.h>

/* Index (in uint64 words) of each field of the 3.13 _Py_DebugOffsets. */
enum {
    W_VERSION = 1, W_FREE_THREADED = 2,
    W_RT_SIZE = 3, W_RT_FINALIZING = 4, W_RT_INTERPRETERS_HEAD = 5,
    W_IS_SIZE = 6, W_IS_ID = 7, W_IS_NEXT = 8, W_IS_THREADS_HEAD = 9, W_IS_GC = 10,
    W_IS_IMPORTS = 11, W_IS_SYSDICT = 12, W_IS_BUILTINS = 13, W_IS_CEVAL_GIL = 14,
    W_IS_GIL_STATE = 15, W_IS_GIL_ENABLED = 16, W_IS_GIL_LOCKED = 17, W_IS_GIL_HOLDER = 18,
    W_TS_SIZE = 19, W_TS_PREV = 20, W_TS_NEXT = 21, W_TS_INTERP = 22, W_TS_CURRENT_FRAME = 23,
    W_TS_THREAD_ID = 24, W_TS_NATIVE_THREAD_ID = 25, W_TS_DATASTACK = 26, W_TS_STATUS = 27,
    W_FR_SIZE = 28, W_FR_PREVIOUS = 29, W_FR_EXECUTABLE = 30, W_FR_INSTR_PTR = 31,
    W_FR_LOCALSPLUS = 32, W_FR_OWNER = 33,
    W_CO_SIZE = 34, W_CO_FILENAME = 35, W_CO_NAME = 36, W_CO_QUALNAME = 37,
    W_CO_LINETABLE = 38, W_CO_FIRSTLINENO = 39, W_CO_ARGCOUNT = 40, W_CO_LOCALSPLUSNAMES = 41,
    W_CO_LOCALSPLUSKINDS = 42, W_CO_CODE_ADAPTIVE = 43,
    W_OB_SIZE = 44, W_OB_TYPE = 45,
    W_TP_SIZE = 46, W_TP_NAME = 47, W_TP_REPR = 48, W_TP_FLAGS = 49,
    W_TUPLE = 50, W_LIST = 53, W_DICT = 56, W_FLOAT = 59, W_LONG = 61,
    W_BYTES_SIZE = 64, W_BYTES_OB_SIZE = 65, W_BYTES_OB_SVAL = 66,
    W_UNI_SIZE = 67, W_UNI_STATE = 68, W_UNI_LENGTH = 69, W_UNI_ASCII_SIZE = 70,
    W_GC_SIZE = 71, W_GC_COLLECTING = 72,
    W_COUNT = 73,
};

static uint64_t word(const unsigned char *block, int i)
{
    uint64_t v;
    memcpy(&v, block + 8 * (size_t)i, sizeof v);
    return v;
}

int py_layout_from_debug_offsets(const unsigned char *block, uint64_t len, py_layout *out,
                                 char *why, int why_len)
{
    if (len < 8 * (uint64_t)W_COUNT) {
        snprintf(why, (size_t)why_len, "debug offsets block too short");
        return -1;
    }
    if (memcmp(block, "xdebugpy", 8) != 0) {
        snprintf(why, (size_t)why_len, "no _Py_DebugOffsets cookie at _PyRuntime");
        return -1;
    }
    uint64_t version = word(block, W_VERSION);
    int major = (int)((version >> 24) & 0xff), minor = (int)((version >> 16) & 0xff);
    if (major != 3 || minor != 13) {
        snprintf(why, (size_t)why_len, "debug offsets of Python %d.%d: this lapse reads the 3.13 layout of them",
                 major, minor);
        return -1;
    }
    if (word(block, W_FREE_THREADED)) {
        snprintf(why, (size_t)why_len, "free-threaded CPython (3.13t) is not supported");
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->major = major;
    out->minor = minor;
    out->runtime_size = word(block, W_RT_SIZE);
    out->runtime_interpreters_head = word(block, W_RT_INTERPRETERS_HEAD);
    out->interp_size = word(block, W_IS_SIZE);
    out->interp_id = word(block, W_IS_ID);
    out->interp_next = word(block, W_IS_NEXT);
    out->interp_threads_head = word(block, W_IS_THREADS_HEAD);
    out->gil_mode = PY_GIL_INTERP_INLINE;
    out->interp_gil = word(block, W_IS_GIL_STATE);
    uint64_t holder = word(block, W_IS_GIL_HOLDER), locked = word(block, W_IS_GIL_LOCKED);
    if (holder < out->interp_gil || locked < out->interp_gil) {
        snprintf(why, (size_t)why_len, "debug offsets: GIL fields outside the GIL state");
        return -1;
    }
    out->gil_last_holder = holder - out->interp_gil;
    out->gil_locked = locked - out->interp_gil;
    out->tstate_size = word(block, W_TS_SIZE);
    out->tstate_prev = word(block, W_TS_PREV);
    out->tstate_next = word(block, W_TS_NEXT);
    out->tstate_interp = word(block, W_TS_INTERP);
    out->tstate_thread_id = word(block, W_TS_THREAD_ID);
    out->tstate_native_thread_id = word(block, W_TS_NATIVE_THREAD_ID);
    out->has_cframe = 0;
    out->tstate_current_frame = word(block, W_TS_CURRENT_FRAME);
    out->frame_size = word(block, W_FR_LOCALSPLUS);
    out->frame_previous = word(block, W_FR_PREVIOUS);
    out->frame_code = word(block, W_FR_EXECUTABLE);
    out->frame_instr = word(block, W_FR_INSTR_PTR);
    out->frame_owner = word(block, W_FR_OWNER);
    out->owner_cstack = 3; /* FRAME_OWNED_BY_CSTACK in 3.13 */
    out->code_size = word(block, W_CO_SIZE);
    out->code_filename = word(block, W_CO_FILENAME);
    out->code_name = word(block, W_CO_NAME);
    out->code_qualname = word(block, W_CO_QUALNAME);
    out->code_linetable = word(block, W_CO_LINETABLE);
    out->code_firstlineno = word(block, W_CO_FIRSTLINENO);
    out->code_adaptive = word(block, W_CO_CODE_ADAPTIVE);
    /* Not among the debug offsets: in 3.13's PyCodeObject (Include/cpython/code.h, fixed
     * within the minor version) co_version is the sixth int after co_firstlineno. */
    out->code_version = out->code_firstlineno + 6 * 4;
    out->ob_type = word(block, W_OB_TYPE);
    out->unicode_state = word(block, W_UNI_STATE);
    out->unicode_length = word(block, W_UNI_LENGTH);
    out->unicode_ascii_size = word(block, W_UNI_ASCII_SIZE);
    /* PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject (3.12+);
     * the debug offsets do not carry its size. */
    out->unicode_compact_size = out->unicode_ascii_size + 16;
    out->bytes_size = word(block, W_BYTES_OB_SIZE);
    out->bytes_ob_sval = word(block, W_BYTES_OB_SVAL);
    /* Thread names: the offsets the debug block lacks come from 3.13's headers
     * (py_objects_313.c); those it has must agree with them, or names are not read
     * (interp_modules 0) while stacks still are. */
    out->objects = py_object_offsets_3_13;
    out->objects.interp_modules = word(block, W_IS_IMPORTS);
    if (word(block, W_DICT + 1) != out->objects.dict_keys || word(block, W_DICT + 2) != out->objects.dict_values ||
        word(block, W_LONG + 1) != out->objects.long_size || word(block, W_LONG + 2) != out->objects.long_digits ||
        out->objects.interp_modules + 8 > out->interp_size)
        out->objects.interp_modules = 0;

    /* Every offset must fall inside the structure it indexes. */
    const struct { uint64_t off, size; const char *what; } checks[] = {
        {out->runtime_interpreters_head, out->runtime_size, "runtime"},
        {out->interp_threads_head, out->interp_size, "interpreter"},
        {holder, out->interp_size, "interpreter GIL"},
        {out->tstate_current_frame, out->tstate_size, "thread"},
        {out->tstate_native_thread_id, out->tstate_size, "thread"},
        {out->frame_owner, out->frame_size, "frame"},
        {out->frame_instr, out->frame_size, "frame"},
        {out->code_adaptive, out->code_size + 1, "code"},
        {out->code_linetable, out->code_size, "code"},
        {out->code_version, out->code_filename, "code"},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
        if (checks[i].size == 0 || checks[i].off >= checks[i].size || checks[i].size > (1u << 24)) {
            snprintf(why, (size_t)why_len, "debug offsets: %s offset out of range", checks[i].what);
            return -1;
        }
    return 0;
}
