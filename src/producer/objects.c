/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loaded objects in the stream (include/flightrec/objects.h): one
 * OBJECT_LOAD record per object, so that a reader can turn code addresses
 * into symbol names with the object files.
 */
#include <flightrec.h>
#include <flightrec/objects.h>

#include "platform.h"
#include "runtime.h"

#if defined(__linux__) && !defined(FLIGHTREC_PORT_FIRMWARE)

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

enum {
    PATH_MAX_BYTES = 256,      /* as FLIGHTREC_STRING_MAX: longer paths cut */
    BUILD_ID_MAX = 64,
    BATCH = 64,                /* objects collected per walk */
    KNOWN_MAX = 4096           /* objects remembered as recorded */
};

struct object {
    uintptr_t base;
    uint64_t key;
    size_t path_len;
    size_t build_id_len;
    char path[PATH_MAX_BYTES];
    unsigned char build_id[BUILD_ID_MAX];
};

static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t known[KNOWN_MAX];
static size_t known_count;
static int fork_handler_set;

struct walk {
    struct object *batch;
    size_t count;
    int more;                  /* the batch was full: walk again */
};

/* FNV-1a of the base and the path: an object is the same object if both
 * are (dlclose and a dlopen of another file at the same base are not). */
static uint64_t object_key(uintptr_t base, const char *path, size_t len)
{
    uint64_t h = 14695981039346656037ull ^ (uint64_t)base;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)path[i]) * 1099511628211ull;
    return h == 0 ? 1 : h;
}

static int is_known(uint64_t key)
{
    for (size_t i = 0; i < known_count; i++)
        if (known[i] == key)
            return 1;
    return 0;
}

/* The GNU build-id note among the object's PT_NOTE segments (in memory:
 * our own loaded objects, their notes are the loader's to trust). */
static size_t find_build_id(const struct dl_phdr_info *info,
                            unsigned char *out)
{
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p =
            (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        size_t left = ph->p_memsz;
        size_t align = ph->p_align == 8 ? 8 : 4;
        while (left >= sizeof(ElfW(Nhdr))) {
            ElfW(Nhdr) nh;
            memcpy(&nh, p, sizeof nh);
            size_t name_sz = (nh.n_namesz + align - 1) & ~(align - 1);
            size_t desc_sz = (nh.n_descsz + align - 1) & ~(align - 1);
            size_t total = sizeof nh + name_sz + desc_sz;
            if (total > left)
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp(p + sizeof nh, "GNU", 4) == 0 &&
                nh.n_descsz <= BUILD_ID_MAX) {
                memcpy(out, p + sizeof nh + name_sz, nh.n_descsz);
                return nh.n_descsz;
            }
            p += total;
            left -= total;
        }
    }
    return 0;
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct walk *walk = arg;
    const char *name = info->dlpi_name;
    char exe[PATH_MAX_BYTES];
    if (name == NULL || name[0] == '\0') {
        /* The program itself: the loader names it "". */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = '\0';
        name = exe;
    } else if (name[0] != '/') {
        return 0;   /* the vDSO ("linux-vdso.so.1"): no file to read */
    }
    size_t len = strnlen(name, PATH_MAX_BYTES - 1);
    uint64_t key = object_key(info->dlpi_addr, name, len);
    if (is_known(key))
        return 0;
    for (size_t i = 0; i < walk->count; i++)
        if (walk->batch[i].key == key)
            return 0;
    if (walk->count == BATCH) {
        walk->more = 1;
        return 1;
    }
    struct object *o = &walk->batch[walk->count++];
    o->base = info->dlpi_addr;
    o->key = key;
    o->path_len = len;
    memcpy(o->path, name, len);
    o->path[len] = '\0';
    o->build_id_len = find_build_id(info, o->build_id);
    return 0;
}

static void pack(struct flightrec_item_in *items, size_t *n, uint32_t event,
                 const unsigned char *bytes, size_t len, int nul)
{
    enum { PER_ITEM = sizeof(uintptr_t) };
    size_t words = nul ? len / PER_ITEM + 1 : (len + PER_ITEM - 1) / PER_ITEM;
    for (size_t i = 0; i < words; i++) {
        uintptr_t word = 0;
        for (size_t k = 0; k < PER_ITEM && i * PER_ITEM + k < len; k++)
            word |= (uintptr_t)bytes[i * PER_ITEM + k] << (8 * k);
        items[*n].event = event;
        items[*n].data = word;
        ++*n;
    }
}

static void record_object(const struct object *o)
{
    enum { PER_ITEM = sizeof(uintptr_t) };
    struct flightrec_item_in items[1 + PATH_MAX_BYTES / PER_ITEM + 1 +
                                   BUILD_ID_MAX / PER_ITEM];
    size_t n = 0;
    items[n].event = FLIGHTREC_EV_OBJECT_LOAD;
    items[n++].data = o->base;
    pack(items, &n, FLIGHTREC_EV_OBJECT_PATH, (const unsigned char *)o->path,
         o->path_len, 1);
    items[n].event = FLIGHTREC_EV_OBJECT_BUILD_ID;
    items[n++].data = o->build_id_len;
    pack(items, &n, FLIGHTREC_EV_OBJECT_BUILD_ID, o->build_id,
         o->build_id_len, 0);
    flightrec_produce_n(items, n);
}

static void forget_after_fork(void)
{
    /* The child's stream is its own: its objects are recorded anew by its
     * next call. */
    pthread_mutex_init(&objects_lock, NULL);
    known_count = 0;
}

unsigned flightrec_objects_record(void)
{
    static struct object batch[BATCH];
    unsigned recorded = 0;
    flightrec__ensure_init();
    pthread_mutex_lock(&objects_lock);
    if (!fork_handler_set) {
        fork_handler_set = 1;
        flightrec__port_at_fork(NULL, NULL, forget_after_fork);
    }
    /* Skipped objects stay unknown, so a later call records them. */
    if (flightrec_event_enabled(FLIGHTREC_EV_OBJECT_LOAD)) {
        struct walk walk;
        do {
            walk.batch = batch;
            walk.count = 0;
            walk.more = 0;
            /* Recorded outside the walk: the loader's lock is held in it,
             * and a thread's first record sets up its ring. */
            dl_iterate_phdr(collect, &walk);
            for (size_t i = 0; i < walk.count; i++) {
                record_object(&batch[i]);
                if (known_count < KNOWN_MAX)
                    known[known_count++] = batch[i].key;
                recorded++;
            }
        } while (walk.more && known_count < KNOWN_MAX);
    }
    pthread_mutex_unlock(&objects_lock);
    return recorded;
}

#else

unsigned flightrec_objects_record(void)
{
    return 0;
}

#endif
