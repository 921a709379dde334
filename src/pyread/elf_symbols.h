/* Symbols and sections of an ELF file on disk, and where a process mapped them. */
#ifndef LAPSE_PYREAD_ELF_SYMBOLS_H
#define LAPSE_PYREAD_ELF_SYMBOLS_H

#include <stdint.h>
#include <sys/types.h>

typedef struct elf_symbols {
    int ok;
    int is_dyn;            /* ET_DYN (PIE or shared library) */
    uint64_t first_load_vaddr;   /* p_vaddr of the first PT_LOAD, page-aligned down */
    uint64_t first_load_offset;  /* p_offset of the first PT_LOAD, page-aligned down */
    uint64_t py_runtime;         /* value of _PyRuntime, or the .PyRuntime section address */
    uint64_t py_version;         /* value of Py_Version, 0 if absent */
    uint64_t py_code_type;       /* value of PyCode_Type, 0 if absent */
    uint64_t py_code_counter;    /* value of _Py_next_func_version (3.12, .symtab), 0 if absent */
    /* the types thread names are checked against (0 if absent) */
    uint64_t py_dict_type, py_unicode_type, py_long_type, py_module_type;
} elf_symbols;

/* An ELF file's type and its first PT_LOAD (page-aligned), and a section's address. */
typedef struct elf_file_info {
    int is_dyn; /* ET_DYN (PIE or shared library) */
    uint64_t first_load_vaddr, first_load_offset;
    uint64_t section_addr; /* of the section elf_find was asked for; 0 if none */
} elf_file_info;

/* values[i] = the value of the defined symbol names[i] in the ELF64 file at path
 * (.dynsym first, then .symtab; 0 when absent); info: the file's type, first PT_LOAD
 * and the address of the section named section (may be NULL). Returns 0 for an ELF64
 * file (symbols may still be absent), -1 otherwise. Every offset is bounds-checked. */
int elf_find(const char *path, const char *const *names, uint64_t *values, int n,
             const char *section, elf_file_info *info);

/* Read what the external reader needs from the ELF file at path. Returns 0 if the
 * file is an ELF64 file (symbols may still be absent), -1 otherwise. */
int elf_symbols_read(const char *path, elf_symbols *out);

/* One file mapped in a process: its path and where its first PT_LOAD landed. */
typedef struct mapped_file {
    char path[512];
    uint64_t start;   /* lowest mapping start */
    uint64_t offset0_start; /* start of the mapping with file offset 0, or 0 */
    int exec_main;    /* 1 for the process's executable (/proc/PID/exe) */
} mapped_file;

/* The files mapped by pid whose name looks like Python's executable or libpython
 * (first the executable, then libpython*). Returns the count (0..max), or -1 with
 * errno set if /proc/PID/maps cannot be read. */
int proc_python_files(pid_t pid, mapped_file *out, int max);

#endif
