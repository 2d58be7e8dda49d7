/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "convert-symbols.h"

#ifndef FLIGHTREC_NO_ELFUTILS
#include <elfutils/libdwfl.h>
#include <gelf.h>
#else
/* Cross builds, whose targets have no elfutils here: objects are still
 * parsed (CTF's statedump), names are never looked up. */
typedef void Dwfl;
typedef void Dwfl_Module;
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flightrec/events.h>

#include "convert-map.h"

enum {
    PATH_BYTES = 256,        /* the writer keeps at most 255 bytes */
    BUILD_ID_BYTES = 64,
    OBJECTS_MAX = 1u << 16,  /* a stream naming more is not believed */
    CACHE_MAX = 1u << 20     /* names remembered per address */
};

enum object_state { PENDING = 0, USABLE = 1, UNUSABLE = -1 };

struct object {
    struct fr_object_rec rec;
    int state;
    int warned;              /* one message per object */
    Dwfl_Module *module;
    uint64_t low, high;
};

struct fr_symbols {
    size_t word;
    fr_symbols_warn_fn warn;
    void *arg;
    struct object *objects;
    size_t count, cap;
    struct fr_map pending;   /* ring -> index + 1 of its open record */
    struct fr_map cache;     /* address -> name (malloc'ed) */
    Dwfl *dwfl;
    int dirty;               /* objects not yet given to dwfl */
    int warned_outside;
};

#ifndef FLIGHTREC_NO_ELFUTILS
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};
#endif

/* Path bytes from the stream, fit for a terminal. */
static void escape(char *out, size_t size, const char *in, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < size; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            snprintf(out + o, size - o, "\\x%02x", c);
            o += 4;
        }
    }
    out[o] = '\0';
}

__attribute__((format(printf, 2, 3))) static void
say(struct fr_symbols *s, const char *fmt, ...)
{
    char line[4 * PATH_BYTES + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (s->warn != NULL)
        s->warn(s->arg, line);
    else
        fprintf(stderr, "flightrec: %s\n", line);
}

/* The object's path, escaped, in a buffer of PATH_TEXT bytes. */
#define PATH_TEXT (4 * PATH_BYTES + 8)
static const char *shown(const struct object *o, char *buf)
{
    escape(buf, PATH_TEXT, o->rec.path, o->rec.path_len);
    return buf;
}

struct fr_symbols *fr_symbols_create(size_t word_bytes,
                                     fr_symbols_warn_fn warn, void *arg)
{
    struct fr_symbols *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->word = word_bytes == 4 ? 4 : 8;
    s->warn = warn;
    s->arg = arg;
    fr_map_init(&s->pending);
    fr_map_init(&s->cache);
    return s;
}

static void free_name(void *val, void *arg)
{
    (void)arg;
    free(val);
}

void fr_symbols_destroy(struct fr_symbols *s)
{
    if (s == NULL)
        return;
#ifndef FLIGHTREC_NO_ELFUTILS
    if (s->dwfl != NULL)
        dwfl_end(s->dwfl);
#endif
    fr_map_each(&s->cache, free_name, NULL);
    fr_map_free(&s->cache);
    fr_map_free(&s->pending);
    free(s->objects);
    free(s);
}

static struct object *open_object(struct fr_symbols *s, uint32_t ring)
{
    uintptr_t v = (uintptr_t)fr_map_get(&s->pending, ring);
    return v == 0 ? NULL : &s->objects[v - 1];
}

static void append(unsigned char *dst, size_t *len, size_t cap, uint64_t word,
                   size_t bytes, int *nul)
{
    for (size_t k = 0; k < bytes; k++) {
        unsigned char c = (unsigned char)(word >> (8 * k));
        if (nul != NULL && c == 0) {
            *nul = 1;
            return;
        }
        if (*len < cap)
            dst[(*len)++] = c;
    }
}

void fr_object_rec_start(struct fr_object_rec *o,
                         const struct flightrec_record *r)
{
    memset(o, 0, sizeof *o);
    o->base = r->data;
    o->ns = r->time_ns;
}

int fr_object_rec_take(struct fr_object_rec *o,
                       const struct flightrec_record *r, size_t word_bytes)
{
    if (r->type != FLIGHTREC_RECORD_EVENT)
        return 0;
    size_t word = word_bytes == 4 ? 4 : 8;
    if (r->event == FLIGHTREC_EV_OBJECT_PATH) {
        if (!o->path_done && o->build_id_seen == 0)
            append((unsigned char *)o->path, &o->path_len,
                   sizeof o->path - 1, r->data, word, &o->path_done);
        return 1;
    }
    if (r->event != FLIGHTREC_EV_OBJECT_BUILD_ID)
        return 0;
    o->path_done = 1;
    if (o->build_id_seen == 0) {
        int fits = r->data <= sizeof o->build_id;
        o->build_id_seen = fits ? 1 : 2;
        o->build_id_want = fits ? (size_t)r->data : 0;
    } else if (o->build_id_seen == 1) {
        size_t left = o->build_id_want - o->build_id_len;
        append(o->build_id, &o->build_id_len, o->build_id_want, r->data,
               left < word ? left : word, NULL);
    }
    return 1;
}

void fr_symbols_record(struct fr_symbols *s, const struct flightrec_record *r)
{
    if (r->type != FLIGHTREC_RECORD_EVENT) {
        fr_map_remove(&s->pending, r->ring);
        return;
    }
    if (r->event == FLIGHTREC_EV_OBJECT_LOAD) {
        fr_map_remove(&s->pending, r->ring);
        if (s->count == OBJECTS_MAX)
            return;
        if (s->count == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 16;
            struct object *n = realloc(s->objects, cap * sizeof *n);
            if (n == NULL)
                return;
            s->objects = n;
            s->cap = cap;
        }
        struct object *o = &s->objects[s->count];
        memset(o, 0, sizeof *o);
        fr_object_rec_start(&o->rec, r);
        if (fr_map_put(&s->pending, r->ring,
                       (void *)(uintptr_t)(s->count + 1)) != 0)
            return;
        s->count++;
        s->dirty = 1;
        return;
    }
    if (fr_map_count(&s->pending) == 0)
        return;
    struct object *o = open_object(s, r->ring);
    /* Anything else on the ring ends its object record. */
    if (o != NULL && !fr_object_rec_take(&o->rec, r, s->word))
        fr_map_remove(&s->pending, r->ring);
}

static int same_object(const struct object *a, const struct object *b)
{
    return a->rec.base == b->rec.base && a->rec.path_len == b->rec.path_len &&
           memcmp(a->rec.path, b->rec.path, a->rec.path_len) == 0;
}

static void give_to_dwfl(struct fr_symbols *s, size_t index)
{
    struct object *o = &s->objects[index];
    char text[PATH_TEXT];
    o->state = UNUSABLE;
    if (o->rec.path_len == 0 || o->rec.path[0] != '/') {
        if (o->rec.path_len != 0)
            say(s, "loaded object '%s' has no absolute path; its functions "
                   "are shown as addresses", shown(o, text));
        return;
    }
    o->rec.path[o->rec.path_len] = '\0';
    for (size_t i = 0; i < index; i++)
        if (s->objects[i].state == USABLE && same_object(&s->objects[i], o))
            return;   /* recorded again (a new start): the first serves */
    /* Not blocking on a FIFO or a device the stream names. */
    int fd = open(o->rec.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        say(s, "cannot open %s (%s); its functions are shown as addresses",
            shown(o, text), strerror(errno));
        return;
    }
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    close(fd);
    if (!regular) {
        say(s, "%s is not a regular file; its functions are shown as "
               "addresses", shown(o, text));
        return;
    }
#ifdef FLIGHTREC_NO_ELFUTILS
    if (!s->warned_outside) {
        s->warned_outside = 1;
        say(s, "this flightrec was built without elfutils: function "
               "addresses are not named");
    }
    return;
#else
    if (s->dwfl == NULL && (s->dwfl = dwfl_begin(&callbacks)) == NULL) {
        say(s, "cannot read %s: %s", shown(o, text), dwfl_errmsg(-1));
        return;
    }
    Dwfl_Module *m = dwfl_report_elf(s->dwfl, o->rec.path, o->rec.path, -1, o->rec.base,
                                     true);
    if (m == NULL) {
        say(s, "cannot read %s as ELF (%s); its functions are shown as "
               "addresses", shown(o, text), dwfl_errmsg(-1));
        return;
    }
    if (o->rec.build_id_len != 0) {
        const unsigned char *bits = NULL;
        GElf_Addr vaddr;
        int n = dwfl_module_build_id(m, &bits, &vaddr);
        if (n != (int)o->rec.build_id_len ||
            memcmp(bits, o->rec.build_id, o->rec.build_id_len) != 0) {
            say(s, "%s is not the file that was recorded (its build-id "
                   "differs); its functions are shown as addresses",
                shown(o, text));
            return;
        }
    }
    Dwarf_Addr low = 0, high = 0;
    dwfl_module_info(m, NULL, &low, &high, NULL, NULL, NULL, NULL);
    o->module = m;
    o->low = low;
    o->high = high;
    o->state = USABLE;
#endif
}

static void report_new(struct fr_symbols *s)
{
    s->dirty = 0;
#ifdef FLIGHTREC_NO_ELFUTILS
    for (size_t i = 0; i < s->count; i++)
        if (s->objects[i].state == PENDING)
            give_to_dwfl(s, i);
#else
    if (s->dwfl != NULL)
        dwfl_report_begin_add(s->dwfl);
    for (size_t i = 0; i < s->count; i++)
        if (s->objects[i].state == PENDING)
            give_to_dwfl(s, i);
    if (s->dwfl != NULL && dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
        /* Modules dwfl could not keep (overlapping ranges). */
        for (size_t i = 0; i < s->count; i++)
            s->objects[i].module = NULL;
        for (size_t i = 0; i < s->count; i++)
            if (s->objects[i].state == USABLE)
                s->objects[i].state = UNUSABLE;
        say(s, "the loaded objects overlap (%s); functions are shown as "
               "addresses", dwfl_errmsg(-1));
    }
#endif
}

static const char *remember(struct fr_symbols *s, uint64_t address,
                            const char *name, uint64_t offset)
{
    char buf[512];
    if (offset != 0)
        snprintf(buf, sizeof buf, "%.480s+0x%" PRIx64, name, offset);
    else
        snprintf(buf, sizeof buf, "%.480s", name);
    char *copy = strdup(buf);
    if (copy == NULL)
        return NULL;
    if (fr_map_count(&s->cache) >= CACHE_MAX || fr_map_put(&s->cache, address,
                                                  copy) != 0) {
        /* Not remembered: valid until the next call all the same. */
        static char last[512];
        memcpy(last, copy, strlen(copy) + 1);
        free(copy);
        return last;
    }
    return copy;
}

const char *fr_symbols_name(struct fr_symbols *s, uint64_t address)
{
    const char *hit = fr_map_get(&s->cache, address);
    if (hit != NULL)
        return hit;
    /* A recording without objects did not ask for names (FUNCTION_ENTRY
     * of fork and exec under `flightrec record`, RTEMS streams): hex, and
     * nothing to say. */
    if (s->count == 0)
        return NULL;
    if (s->dirty)
        report_new(s);
    const struct object *o = NULL;
    int covered = 0;
    for (size_t i = s->count; i-- > 0;) {
        const struct object *c = &s->objects[i];
        if (c->state == USABLE && address >= c->low && address < c->high) {
            o = c;
            break;
        }
        if (c->state == UNUSABLE && address >= c->rec.base)
            covered = 1;   /* maybe its file: already said */
    }
    if (o == NULL) {
        if (!covered && !s->warned_outside) {
            s->warned_outside = 1;
            char detail[160];
            snprintf(detail, sizeof detail,
                     "0x%" PRIx64 " and others are in none of the loaded "
                     "objects recorded (their records were overwritten?)",
                     address);
            say(s, "function addresses not named: %s", detail);
        }
        return NULL;
    }
#ifdef FLIGHTREC_NO_ELFUTILS
    uint64_t offset = 0;
    const char *name = NULL;   /* never USABLE: not reached */
#else
    GElf_Off offset = 0;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(o->module, address, &offset, &sym,
                                            NULL, NULL, NULL);
#endif
    if (name == NULL || name[0] == '\0') {
        struct object *w = &s->objects[o - s->objects];
        if (!w->warned) {
            w->warned = 1;
            char detail[64];
            snprintf(detail, sizeof detail, "0x%" PRIx64, address);
            char text[PATH_TEXT];
            say(s, "%s has no symbol for %s and maybe others (stripped?); "
                   "they are shown as addresses", shown(o, text), detail);
        }
        return NULL;
    }
    return remember(s, address, name, offset);
}

int fr_symbols_object(const struct fr_symbols *s, size_t index,
                      uint64_t *base, const char **path,
                      const unsigned char **build_id, size_t *build_id_len)
{
    if (index >= s->count)
        return -1;
    const struct object *o = &s->objects[index];
    *base = o->rec.base;
    *path = o->rec.path;
    *build_id = o->rec.build_id;
    *build_id_len = o->rec.build_id_len;
    return 0;
}

int fr_object_file_info(const char *path, uint64_t *memsz, int *is_pic)
{
    *memsz = 0;
    *is_pic = 0;
#ifdef FLIGHTREC_NO_ELFUTILS
    (void)path;
    return -1;
#else
    if (path[0] != '/')
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    int rc = -1;
    Elf *elf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        goto out;
    elf_version(EV_CURRENT);
    elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    size_t phnum;
    if (elf == NULL || gelf_getehdr(elf, &eh) == NULL ||
        elf_getphdrnum(elf, &phnum) != 0)
        goto out;
    uint64_t low = UINT64_MAX, high = 0;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
            continue;
        uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
        uint64_t start = ph.p_vaddr & ~(align - 1);
        if (ph.p_vaddr > UINT64_MAX - ph.p_memsz)
            continue;   /* a hostile header: not a range */
        if (start < low)
            low = start;
        if (ph.p_vaddr + ph.p_memsz > high)
            high = ph.p_vaddr + ph.p_memsz;
    }
    if (high > low) {
        *memsz = high - low;
        *is_pic = eh.e_type == ET_DYN;
        rc = 0;
    }
out:
    if (elf != NULL)
        elf_end(elf);
    close(fd);
    return rc;
#endif
}
