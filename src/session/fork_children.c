#include "fork_children.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOTS 4096u

enum { SLOT_FREE, SLOT_FORKED, SLOT_RAN };

typedef struct slot {
    int64_t pid;
    uint64_t fork_mono_ns;
    uint32_t state; /* atomic: SLOT_* */
} slot;

typedef struct shared_list {
    uint32_t claimed; /* atomic: slots handed out; past SLOTS, children unrecorded */
    slot slots[SLOTS];
} shared_list;

static shared_list *list;     /* this process's children (MAP_SHARED with them) */
static slot *own_slot;        /* the child's entry in its parent's list */
static uint64_t own_look_ns;

void fork_children_prepare(void)
{
    if (list)
        return;
    void *p = mmap(NULL, sizeof *list, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        list = p; /* zero-filled; without it, children are not recorded */
}

void fork_children_child(int record, uint64_t fork_mono_ns)
{
    own_slot = NULL;
    own_look_ns = 0;
    if (record && list) {
        uint32_t i = __atomic_fetch_add(&list->claimed, 1, __ATOMIC_ACQ_REL);
        if (i < SLOTS) {
            own_slot = &list->slots[i];
            own_slot->pid = getpid();
            own_slot->fork_mono_ns = fork_mono_ns;
            __atomic_store_n(&own_slot->state, SLOT_FORKED, __ATOMIC_RELEASE);
            own_look_ns = fork_mono_ns + FORK_CHILDREN_LOOK_NS;
        }
    }
    list = NULL; /* the parent's stays mapped for own_slot; this one's own children
                    get a list at its first fork */
}

uint64_t fork_children_look_due(void) { return own_slot ? own_look_ns : 0; }

void fork_children_look(uint64_t now, int worked, int wrote)
{
    if (!own_slot)
        return;
    if (worked)
        __atomic_store_n(&own_slot->state, SLOT_RAN, __ATOMIC_RELEASE);
    if (worked || wrote)
        own_slot = NULL;
    else
        own_look_ns = now + FORK_CHILDREN_LOOK_NS;
}

void fork_children_reset(void)
{
    if (!list)
        return;
    uint32_t n = __atomic_load_n(&list->claimed, __ATOMIC_ACQUIRE);
    memset(list->slots, 0, (n < SLOTS ? n : SLOTS) * sizeof(slot));
    __atomic_store_n(&list->claimed, 0, __ATOMIC_RELEASE);
}

int fork_children_take(store_file *f)
{
    f->children = NULL;
    f->child_count = 0;
    f->children_unrecorded = 0;
    if (!list)
        return 0;
    uint32_t claimed = __atomic_load_n(&list->claimed, __ATOMIC_ACQUIRE);
    uint32_t n = claimed < SLOTS ? claimed : SLOTS, ran = 0;
    for (uint32_t i = 0; i < n; i++)
        ran += __atomic_load_n(&list->slots[i].state, __ATOMIC_ACQUIRE) == SLOT_RAN;
    f->children_unrecorded = claimed - n;
    if (!ran)
        return 0;
    f->children = malloc(ran * sizeof *f->children);
    if (!f->children)
        return -ENOMEM;
    for (uint32_t i = 0; i < n && f->child_count < ran; i++) {
        const slot *s = &list->slots[i];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SLOT_RAN)
            continue;
        f->children[f->child_count].pid = s->pid;
        f->children[f->child_count].fork_mono_ns = s->fork_mono_ns;
        f->child_count++;
    }
    return 0;
}
