/* Attaching to a CPython process: find _PyRuntime, Py_Version and PyCode_Type in
 * its executable or libpython, read the version and choose the layout. */
#include "pyread_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *pyread_error_name(int code)
{
    switch (code) {
    case PYREAD_OK: return "ok";
    case PYREAD_GONE: return "gone";
    case PYREAD_NOT_PYTHON: return "not Python";
    case PYREAD_UNKNOWN_VERSION: return "unknown version";
    case PYREAD_PERMISSION: return "permission";
    case PYREAD_READ: return "unreadable";
    default: return "out of memory";
    }
}

void pyread_proc_text(pid_t pid, const char *what, char *out, size_t len, int nul_to_space)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/%s", (int)pid, what);
    out[0] = 0;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, len - 1);
    close(fd);
    if (n <= 0)
        return;
    if (nul_to_space)
        for (ssize_t i = 0; i < n; i++)
            if (out[i] == 0)
                out[i] = ' ';
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\n'))
        n--;
    out[n] = 0;
}

static int permission_message(pid_t pid, char *msg, size_t msglen)
{
    snprintf(msg, msglen,
             "cannot read the memory of process %d: permission denied; run lapse as the target's "
             "user with kernel.yama.ptrace_scope=0 (sysctl -w kernel.yama.ptrace_scope=0), or as root "
             "or with CAP_SYS_PTRACE (in a container: --cap-add SYS_PTRACE)",
             (int)pid);
    return PYREAD_PERMISSION;
}

static int gone_message(pid_t pid, char *msg, size_t msglen)
{
    snprintf(msg, msglen, "no process %d (it has exited, or the PID is wrong)", (int)pid);
    return PYREAD_GONE;
}

/* "libpython3.10.so" / "python3.10" -> 3, 10 */
static int version_from_name(const char *path, int *major, int *minor)
{
    const char *s = strrchr(path, '/');
    s = s ? s + 1 : path;
    const char *p = strstr(s, "python");
    if (!p)
        return -1;
    return sscanf(p + 6, "%d.%d", major, minor) == 2 ? 0 : -1;
}

static void version_string(uint32_t v, char *out, size_t len)
{
    int major = (int)(v >> 24), minor = (int)((v >> 16) & 0xff), micro = (int)((v >> 8) & 0xff);
    int level = (int)((v >> 4) & 0xf), serial = (int)(v & 0xf);
    const char *tag = level == 0xA ? "a" : level == 0xB ? "b" : level == 0xC ? "rc" : "";
    if (*tag)
        snprintf(out, len, "%d.%d.%d%s%d", major, minor, micro, tag, serial);
    else
        snprintf(out, len, "%d.%d.%d", major, minor, micro);
}

/* A target with nothing found yet, or NULL when out of memory. */
static pyread_target *target_new(pid_t pid)
{
    pyread_target *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->pid = pid;
    if (remote_mem_init(&t->mem, pid) != 0 || code_cache_init(&t->codes) != 0) {
        pyread_close(t);
        return NULL;
    }
    return t;
}

int pyread_open_layout(pid_t pid, const struct py_layout *layout, uint64_t runtime, uint64_t code_type,
                       uint64_t code_counter, pyread_target **out, char *msg, size_t msglen)
{
    *out = target_new(pid);
    if (!*out) {
        snprintf(msg, msglen, "out of memory");
        return PYREAD_NO_MEMORY;
    }
    pyread_target *t = *out;
    t->layout = *layout;
    t->runtime = runtime;
    t->code_type = code_type;
    t->code_counter = code_counter;
    remote_mem_watch(&t->mem, code_counter);
    snprintf(t->version, sizeof t->version, "%d.%d", layout->major, layout->minor);
    return PYREAD_OK;
}

int pyread_open(pid_t pid, pyread_target **out, char *msg, size_t msglen)
{
    *out = NULL;
    if (msglen)
        msg[0] = 0;
    if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH))
        return gone_message(pid, msg, msglen);
    mapped_file files[8];
    int nf = proc_python_files(pid, files, 8);
    if (nf < 0) {
        if (errno == ENOENT || errno == ESRCH)
            return gone_message(pid, msg, msglen);
        return permission_message(pid, msg, msglen);
    }
    char comm[64];
    pyread_proc_text(pid, "comm", comm, sizeof comm, 0);

    pyread_target *t = target_new(pid);
    if (!t) {
        snprintf(msg, msglen, "out of memory");
        return PYREAD_NO_MEMORY;
    }
    int found = 0, named_major = 0, named_minor = 0;
    for (int i = 0; i < nf && !found; i++) {
        elf_symbols es;
        char path[600];
        snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, files[i].path);
        if (elf_symbols_read(path, &es) != 0 && elf_symbols_read(files[i].path, &es) != 0)
            continue;
        if (!named_major)
            version_from_name(files[i].path, &named_major, &named_minor);
        if (!es.py_runtime)
            continue;
        uint64_t base = 0;
        if (es.is_dyn) {
            uint64_t start = files[i].offset0_start ? files[i].offset0_start : files[i].start;
            base = start - es.first_load_vaddr;
        }
        t->runtime = base + es.py_runtime;
        t->version_addr = es.py_version ? base + es.py_version : 0;
        t->code_type = es.py_code_type ? base + es.py_code_type : 0;
        t->code_counter = es.py_code_counter ? base + es.py_code_counter : 0;
        t->dict_type = es.py_dict_type ? base + es.py_dict_type : 0;
        t->unicode_type = es.py_unicode_type ? base + es.py_unicode_type : 0;
        t->long_type = es.py_long_type ? base + es.py_long_type : 0;
        t->module_type = es.py_module_type ? base + es.py_module_type : 0;
        snprintf(t->binary, sizeof t->binary, "%s", files[i].path);
        found = 1;
    }
    if (!found) {
        int old = named_major == 3 && named_minor > 0 && named_minor < 11;
        if (old)
            snprintf(msg, msglen,
                     "process %d (%s) runs Python %d.%d, which lapse does not read (it reads 3.11, 3.12 and 3.13)",
                     (int)pid, comm, named_major, named_minor);
        else
            snprintf(msg, msglen,
                     "process %d (%s) is not a CPython process: no _PyRuntime in its executable or a libpython",
                     (int)pid, comm);
        pyread_close(t);
        return old ? PYREAD_UNKNOWN_VERSION : PYREAD_NOT_PYTHON;
    }
    if (!t->version_addr && named_major == 3) {
        snprintf(msg, msglen,
                 "process %d (%s) runs Python %d.%d, which lapse does not read (it reads 3.11, 3.12 and 3.13)",
                 (int)pid, comm, named_major, named_minor);
        pyread_close(t);
        return PYREAD_UNKNOWN_VERSION;
    }
    if (!t->version_addr) {
        snprintf(msg, msglen,
                 "process %d (%s): its Python has no Py_Version (older than 3.11?); lapse reads 3.11, 3.12 and 3.13",
                 (int)pid, comm);
        pyread_close(t);
        return PYREAD_UNKNOWN_VERSION;
    }
    uint32_t v = 0;
    if (remote_read(&t->mem, t->version_addr, &v, sizeof v) != 0) {
        int e = t->mem.last_errno;
        unsigned long long at = (unsigned long long)t->version_addr;
        pyread_close(t);
        if (e == EPERM || e == EACCES)
            return permission_message(pid, msg, msglen);
        if (e == ESRCH)
            return gone_message(pid, msg, msglen);
        snprintf(msg, msglen, "process %d: cannot read Py_Version at 0x%llx (%s)", (int)pid, at,
                 strerror(e));
        return PYREAD_READ;
    }
    version_string(v, t->version, sizeof t->version);
    int major = (int)(v >> 24), minor = (int)((v >> 16) & 0xff);
    const py_layout *table = py_layout_for_table(major, minor);
    if (table) {
        t->layout = *table;
    } else if (major == 3 && minor == 13) {
        unsigned char block[PY_DEBUG_OFFSETS_READ];
        char why[160];
        if (remote_read(&t->mem, t->runtime, block, sizeof block) != 0 ||
            py_layout_from_debug_offsets(block, sizeof block, &t->layout, why, sizeof why) != 0) {
            snprintf(msg, msglen, "process %d runs Python %s: %s", (int)pid, t->version,
                     t->mem.last_errno ? strerror(t->mem.last_errno) : why);
            pyread_close(t);
            return PYREAD_UNKNOWN_VERSION;
        }
    } else {
        snprintf(msg, msglen,
                 "process %d runs Python %s, which this lapse does not know (it reads 3.11, 3.12 and 3.13)",
                 (int)pid, t->version);
        pyread_close(t);
        return PYREAD_UNKNOWN_VERSION;
    }
    /* 3.12 gives each new code object the next value of _Py_next_func_version (3.13
     * keeps the counter in each interpreter, at an offset its debug offsets omit) */
    if (t->layout.minor != 12)
        t->code_counter = 0;
    remote_mem_watch(&t->mem, t->code_counter);
    uint64_t head = 0;
    if (remote_read_u64(&t->mem, t->runtime + t->layout.runtime_interpreters_head, &head) != 0 || head == 0) {
        snprintf(msg, msglen, "process %d (Python %s): no interpreter yet (still starting, or finalizing)", (int)pid,
                 t->version);
        pyread_close(t);
        return PYREAD_READ;
    }
    *out = t;
    return PYREAD_OK;
}

void pyread_close(pyread_target *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->task_count; i++) {
        if (t->tasks[i].stat_fd >= 0)
            close(t->tasks[i].stat_fd);
        if (t->tasks[i].schedstat_fd >= 0)
            close(t->tasks[i].schedstat_fd);
    }
    code_cache_free(&t->codes);
    remote_mem_free(&t->mem);
    free(t);
}

const char *pyread_version(const pyread_target *t)
{
    return t->version;
}

pid_t pyread_pid(const pyread_target *t)
{
    return t->pid;
}

void pyread_io_counters(const pyread_target *t, uint64_t *syscalls, uint64_t *bytes)
{
    *syscalls = t->mem.syscalls;
    *bytes = t->mem.bytes;
}
