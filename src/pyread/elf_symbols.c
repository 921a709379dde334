/* ELF64 symbol lookup from the file (section headers, .dynsym/.symtab, .PyRuntime)
 * and /proc/PID/maps parsing. Every offset read from the file is bounds-checked. */
#include "elf_symbols.h"

#include "store/file_io.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* Fills values[i] with the value of names[i] from one symbol table, where not found
 * yet (defined symbols with a value only). */
static void scan_symbols(const unsigned char *base, uint64_t size, const Elf64_Shdr *symtab,
                         const Elf64_Shdr *strtab, const char *const *names, uint64_t *values, int n)
{
    if (!in_bounds(symtab->sh_offset, symtab->sh_size, size) ||
        !in_bounds(strtab->sh_offset, strtab->sh_size, size) || symtab->sh_entsize != sizeof(Elf64_Sym))
        return;
    const Elf64_Sym *syms = (const Elf64_Sym *)(base + symtab->sh_offset);
    uint64_t count = symtab->sh_size / sizeof(Elf64_Sym);
    const char *strs = (const char *)(base + strtab->sh_offset);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t name = syms[i].st_name;
        if (name == 0 || name >= strtab->sh_size || syms[i].st_value == 0 ||
            syms[i].st_shndx == SHN_UNDEF)
            continue;
        const char *s = strs + name;
        uint64_t room = strtab->sh_size - name;
        if (strnlen(s, room) == room)
            continue;
        for (int k = 0; k < n; k++)
            if (!values[k] && !strcmp(s, names[k]))
                values[k] = syms[i].st_value;
    }
}

int elf_find(const char *path, const char *const *names, uint64_t *values, int n,
             const char *section, elf_file_info *info)
{
    memset(info, 0, sizeof *info);
    for (int k = 0; k < n; k++)
        values[k] = 0;
    /* a path from the target's maps may name anything now (a FIFO in its place must
     * not block the sampler): a regular file, opened without waiting */
    struct stat st;
    char why[256];
    int fd = store_open_regular(path, &st, why, sizeof why);
    if (fd < 0)
        return -1;
    if (st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return -1;
    }
    uint64_t size = (uint64_t)st.st_size;
    unsigned char *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return -1;
    int rc = -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
        goto done;
    info->is_dyn = eh->e_type == ET_DYN;
    /* program headers: the first PT_LOAD */
    if (eh->e_phentsize == sizeof(Elf64_Phdr) &&
        in_bounds(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), size)) {
        const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
        for (int i = 0; i < eh->e_phnum; i++)
            if (ph[i].p_type == PT_LOAD) {
                info->first_load_vaddr = ph[i].p_vaddr & ~(uint64_t)0xfff;
                info->first_load_offset = ph[i].p_offset & ~(uint64_t)0xfff;
                break;
            }
    }
    rc = 0;
    /* section headers: the symbol tables (.dynsym first) and the named section */
    if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_bounds(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
        goto done;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (pass == 0 ? SHT_DYNSYM : SHT_SYMTAB) && sh[i].sh_link < eh->e_shnum)
                scan_symbols(base, size, &sh[i], &sh[sh[i].sh_link], names, values, n);
    const Elf64_Shdr *shstr = eh->e_shstrndx < eh->e_shnum ? &sh[eh->e_shstrndx] : NULL;
    if (!section || !shstr || !in_bounds(shstr->sh_offset, shstr->sh_size, size))
        goto done;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_name >= shstr->sh_size)
            continue;
        const char *nm = (const char *)base + shstr->sh_offset + sh[i].sh_name;
        uint64_t room = shstr->sh_size - sh[i].sh_name;
        if (strnlen(nm, room) < room && !strcmp(nm, section)) {
            info->section_addr = sh[i].sh_addr;
            break;
        }
    }
done:
    munmap(base, size);
    return rc;
}

int elf_symbols_read(const char *path, elf_symbols *out)
{
    static const char *const names[] = {"_PyRuntime",  "Py_Version",    "PyCode_Type",  "_Py_next_func_version",
                                        "PyDict_Type", "PyUnicode_Type", "PyLong_Type", "PyModule_Type"};
    uint64_t values[8];
    elf_file_info info;
    memset(out, 0, sizeof *out);
    if (elf_find(path, names, values, 8, ".PyRuntime", &info) != 0)
        return -1;
    out->ok = 1;
    out->is_dyn = info.is_dyn;
    out->first_load_vaddr = info.first_load_vaddr;
    out->first_load_offset = info.first_load_offset;
    out->py_runtime = values[0] ? values[0] : info.section_addr;
    out->py_version = values[1];
    out->py_code_type = values[2];
    out->py_code_counter = values[3];
    out->py_dict_type = values[4];
    out->py_unicode_type = values[5];
    out->py_long_type = values[6];
    out->py_module_type = values[7];
    return 0;
}

static int looks_like_python(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    return !strncmp(name, "python", 6) || !strncmp(name, "libpython", 9);
}

int proc_python_files(pid_t pid, mapped_file *out, int max)
{
    char p[64], exe[512];
    snprintf(p, sizeof p, "/proc/%d/exe", (int)pid);
    ssize_t el = readlink(p, exe, sizeof exe - 1);
    exe[el > 0 ? el : 0] = 0;
    snprintf(p, sizeof p, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long start, end, offset;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &path_at) < 4 ||
            path_at <= 0)
            continue;
        char *path = line + path_at;
        path[strcspn(path, "\n")] = 0;
        if (path[0] != '/')
            continue;
        int is_exe = exe[0] && !strcmp(path, exe);
        if (!is_exe && !looks_like_python(path))
            continue;
        int k;
        for (k = 0; k < n; k++)
            if (!strcmp(out[k].path, path))
                break;
        if (k == n) {
            if (n == max)
                continue;
            memset(&out[n], 0, sizeof out[n]);
            snprintf(out[n].path, sizeof out[n].path, "%s", path);
            out[n].start = start;
            out[n].exec_main = is_exe;
            n++;
        }
        if (start < out[k].start)
            out[k].start = start;
        if (offset == 0 && !out[k].offset0_start)
            out[k].offset0_start = start;
    }
    fclose(f);
    /* the executable first */
    for (int k = 1; k < n; k++)
        if (out[k].exec_main) {
            mapped_file t = out[0];
            out[0] = out[k];
            out[k] = t;
        }
    return n;
}
