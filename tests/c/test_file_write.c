/* Creating files (store/file_write.c, file_update.c): never through a link, a
 * temporary of its own, the modes of what is created under the umask, the removal
 * of temporaries that writers which died left, and replacing another writer's file
 * (its owner and mode kept; links, FIFOs and other users' files refused). */
#include "../../src/store/codec.h"
#include "../../src/store/file_io.h"
#include "../../src/store/file_update.h"
#include "../../src/store/run_dir.h"
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/lapse-test-file-write-XXXXXX";

static const char *at(const char *name)
{
    static char path[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static void put(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
    }
}

static int holds(const char *path, const char *text)
{
    char buf[256] = "";
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    return !strcmp(buf, text);
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 01000000;
}

static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return (long)p;
}

/* Links planted at the names a writer used (NAME.tmp.<pid>) and at the destination:
 * neither is written through; the destination is replaced by a file of its own. */
static void test_links_are_never_followed(void)
{
    char err[512], name[600];
    put(at("victim"), "victim");
    snprintf(name, sizeof name, "out.tmp.%ld", (long)getpid());
    CHECK(symlink(at("victim"), at(name)) == 0);
    snprintf(name, sizeof name, "out.tmp.%ld.1", (long)getpid());
    CHECK(symlink(at("victim"), at(name)) == 0);
    CHECK(symlink(at("victim"), at("out")) == 0);
    CHECK(store_write_atomic(at("out"), "new", 3, 0, err, sizeof err) == 0);
    CHECK(holds(at("victim"), "victim"));
    CHECK(holds(at("out"), "new"));
    struct stat st;
    CHECK(lstat(at("out"), &st) == 0 && S_ISREG(st.st_mode));
    /* a stream */
    store_out o;
    CHECK(store_out_open(&o, at("out"), 0, err, sizeof err) == 0);
    FILE *f = store_out_stream(&o);
    CHECK(f != NULL);
    fputs("streamed", f);
    CHECK(store_out_commit(&o, err, sizeof err) == 0);
    CHECK(holds(at("out"), "streamed"));
    /* an abort leaves the old file and no temporary */
    CHECK(store_out_open(&o, at("out"), 0, err, sizeof err) == 0);
    CHECK(store_out_write(&o, "half", 4) == 0);
    store_out_abort(&o);
    CHECK(holds(at("out"), "streamed"));
    CHECK(access(at(o.tmp), F_OK) != 0);
    /* errors name the file */
    CHECK(store_write_atomic(at("no/such/out"), "x", 1, 0, err, sizeof err) == -ENOENT);
    CHECK(strstr(err, "no/such/out") != NULL);
    CHECK(store_write_atomic(at(""), "x", 1, 0, err, sizeof err) < 0);
}

static void test_modes(void)
{
    char err[512];
    mode_t old = umask(022);
    CHECK(store_make_dirs(at("private/a"), 0) == 0);
    CHECK(mode_of(at("private")) == 0700 && mode_of(at("private/a")) == 0700);
    CHECK(store_write_atomic(at("private/a/f"), "x", 1, 0, err, sizeof err) == 0);
    CHECK(mode_of(at("private/a/f")) == 0600);
    CHECK(store_make_dirs(at("shared/a"), STORE_SHARE) == 0);
    CHECK(mode_of(at("shared")) == 0750 && mode_of(at("shared/a")) == 0750);
    CHECK(store_write_atomic(at("shared/a/f"), "x", 1, STORE_SHARE, err, sizeof err) == 0);
    CHECK(mode_of(at("shared/a/f")) == 0640);
    umask(077); /* sharing never widens the umask */
    CHECK(store_make_dirs(at("masked/a"), STORE_SHARE) == 0);
    CHECK(mode_of(at("masked/a")) == 0700);
    CHECK(store_write_atomic(at("masked/a/f"), "x", 1, STORE_SHARE, err, sizeof err) == 0);
    CHECK(mode_of(at("masked/a/f")) == 0600);
    umask(old);
    setenv("LAPSE_SHARE", "1", 1);
    CHECK(store_share_from_env() == STORE_SHARE);
    setenv("LAPSE_SHARE", "0", 1);
    CHECK(store_share_from_env() == 0);
    unsetenv("LAPSE_SHARE");
    CHECK(store_share_from_env() == 0);
}

static void test_temp_names(void)
{
    long pid = 0;
    CHECK(store_temp_pid("a.lapse.tmp.123", 7, &pid) && pid == 123);
    CHECK(store_temp_pid("a.lapse.tmp.123.0badc0de", 7, &pid) && pid == 123);
    CHECK(!store_temp_pid("a.lapse.tmp.", 7, &pid));
    CHECK(!store_temp_pid("a.lapse.tmp.12x", 7, &pid));
    CHECK(!store_temp_pid("a.lapse.tmp.0", 7, &pid));
    CHECK(!store_temp_pid("a.lapse.bak.12", 7, &pid));
}

/* The next writer of a file removes its temporaries that writers which died left:
 * regular files of its user only; never a live writer's, a link, another file's
 * (but a .lapse file's writer those of every .lapse file in its directory). */
static void test_dead_temps_removed(void)
{
    char err[512], name[5][600];
    long gone = dead_pid();
    snprintf(name[0], sizeof name[0], "f.tmp.%ld", gone);
    snprintf(name[1], sizeof name[1], "f.tmp.%ld.0123abcd", gone);
    snprintf(name[2], sizeof name[2], "f.tmp.%ld", (long)getppid()); /* alive */
    snprintf(name[3], sizeof name[3], "f.tmp.%ld.lnk", gone);
    snprintf(name[4], sizeof name[4], "g.tmp.%ld", gone); /* another file's */
    for (int i = 0; i < 5; i++)
        if (i != 3)
            put(at(name[i]), "left");
    CHECK(symlink(at("victim"), at(name[3])) == 0);
    char other[600] = "";
    if (geteuid() == 0) { /* another user's leftover stays */
        snprintf(other, sizeof other, "f.tmp.%ld.other", gone);
        put(at(other), "left");
        CHECK(chown(at(other), 65534, 65534) == 0);
    }
    CHECK(store_write_atomic(at("f"), "new", 3, 0, err, sizeof err) == 0);
    CHECK(access(at(name[0]), F_OK) != 0 && access(at(name[1]), F_OK) != 0);
    CHECK(access(at(name[2]), F_OK) == 0 && access(at(name[4]), F_OK) == 0);
    struct stat st;
    CHECK(lstat(at(name[3]), &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(holds(at("victim"), "victim"));
    if (other[0])
        CHECK(access(at(other), F_OK) == 0);
    /* listed for the report: regular .lapse temporaries */
    CHECK(mkdir(at("run"), 0700) == 0);
    snprintf(name[0], sizeof name[0], "run/w-1-0000.lapse.tmp.%ld.x", gone);
    put(at(name[0]), "left");
    snprintf(name[1], sizeof name[1], "run/w-1-0000.lapse.tmp.%ld.y", gone);
    CHECK(symlink(at("victim"), at(name[1])) == 0);
    store_temp *t;
    size_t n;
    CHECK(store_list_temps(at("run"), &t, &n) == 0);
    CHECK_U64(n, 1);
    if (n == 1) {
        CHECK_STR(t[0].path, at(name[0]));
        CHECK_STR(t[0].file, at("run/w-1-0000.lapse"));
        CHECK(t[0].pid == gone && t[0].uid == geteuid());
    }
    store_temps_free(t, n);
    /* a .lapse file's writer also removes the dead temporaries of other .lapse files
     * there (a killed process's file is never written again), and only those */
    snprintf(name[0], sizeof name[0], "run/w-2-dead.lapse.tmp.%ld.0badf00d", gone);
    snprintf(name[2], sizeof name[2], "run/w-3-live.lapse.tmp.%ld", (long)getppid());
    snprintf(name[4], sizeof name[4], "run/notes.txt.tmp.%ld", gone);
    put(at(name[0]), "left");
    put(at(name[2]), "left");
    put(at(name[4]), "left");
    CHECK(store_write_atomic(at("run/w-1-0000.lapse"), "new", 3, 0, err, sizeof err) == 0);
    CHECK(access(at(name[0]), F_OK) != 0);
    CHECK(access(at(name[2]), F_OK) == 0 && access(at(name[4]), F_OK) == 0);
    CHECK(lstat(at(name[1]), &st) == 0 && S_ISLNK(st.st_mode));
}

static void sample_file(store_file *f)
{
    static char *names[] = {""};
    static store_thread threads[] = {{1, "main"}};
    static store_node nodes[1];
    memset(f, 0, sizeof *f);
    f->meta.lapse_version = "test";
    f->meta.host = f->meta.role = f->meta.run_id = f->meta.job_id = "x";
    f->meta.end_reason = f->meta.clock_source = "x";
    f->meta.rank = f->meta.world_size = -1;
    f->names = names;
    f->name_count = 1;
    f->threads = threads;
    f->thread_count = 1;
    nodes[0].parent = -1;
    f->nodes = nodes;
    f->node_count = 1;
}

/* Replacing another writer's file: its owner and mode stay; a link, a FIFO, a file
 * or directory of another owner is refused. */
static void test_update(void)
{
    char err[512];
    store_file f, g;
    sample_file(&f);
    CHECK(mkdir(at("up"), 0755) == 0);
    CHECK(store_write_file(at("up/t.lapse"), &f, 0, err, sizeof err) == 0);
    CHECK(chmod(at("up/t.lapse"), 0640) == 0);
    uid_t owner = geteuid();
    if (owner == 0) {
        CHECK(chown(at("up"), 65534, 65534) == 0);
        CHECK(chown(at("up/t.lapse"), 65534, 65534) == 0);
        owner = 65534;
    }
    store_update u;
    CHECK(store_update_open(&u, at("up/t.lapse"), (int64_t)owner, &g, err, sizeof err) == 0);
    g.meta.write_seq = 42;
    CHECK(store_update_write(&u, &g, err, sizeof err) == 0);
    store_file_free(&g);
    struct stat st;
    CHECK(stat(at("up/t.lapse"), &st) == 0 && st.st_uid == owner && (st.st_mode & 0777) == 0640);
    CHECK(store_read_file(at("up/t.lapse"), 0, &g, err, sizeof err) == 0 && g.meta.write_seq == 42);
    store_file_free(&g);
    /* another owner's */
    CHECK(store_update_open(&u, at("up/t.lapse"), (int64_t)owner + 1, &g, err, sizeof err) == -EPERM);
    CHECK(strstr(err, "belongs to uid") != NULL);
    /* a link at the file, or at its directory */
    CHECK(symlink(at("up/t.lapse"), at("up/link.lapse")) == 0);
    CHECK(store_update_open(&u, at("up/link.lapse"), -1, &g, err, sizeof err) == -ELOOP);
    CHECK(symlink(at("up"), at("uplink")) == 0);
    CHECK(store_update_open(&u, at("uplink/t.lapse"), -1, &g, err, sizeof err) < 0);
    /* a FIFO: refused without blocking */
    CHECK(mkfifo(at("up/fifo.lapse"), 0600) == 0);
    CHECK(store_update_open(&u, at("up/fifo.lapse"), -1, &g, err, sizeof err) == -EINVAL);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_links_are_never_followed();
    test_modes();
    test_temp_names();
    test_dead_temps_removed();
    test_update();
    if (!check_failed) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    } else {
        fprintf(stderr, "test files kept in %s\n", dir);
    }
    return check_done("test_file_write");
}
