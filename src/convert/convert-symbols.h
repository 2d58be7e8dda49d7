/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Code addresses to symbol names: the OBJECT_LOAD records of a stream
 * (docs/format.md, "Loaded objects") say which file was loaded where; the
 * files' symbol tables (read with elfutils' libdwfl) name the addresses.
 * Nothing in the stream is trusted: a missing or changed file, a wrong
 * build-id or a stripped object leaves its addresses unnamed, with one
 * message per object.  A stream without object records names nothing and
 * says nothing (it did not ask for names).
 */
#ifndef FLIGHTREC_CONVERT_SYMBOLS_H
#define FLIGHTREC_CONVERT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include <flightrec/client.h>

#include <flightrec/events.h>

struct fr_symbols;

/* One loaded-object record as it is assembled from its items. */
struct fr_object_rec {
    uint64_t base;
    uint64_t ns;             /* the OBJECT_LOAD item's time */
    char path[256];          /* NUL-terminated, at most 255 bytes */
    size_t path_len;
    int path_done;
    unsigned char build_id[64];
    size_t build_id_len;     /* bytes received (what the record said, or
                              * less when it was cut) */
    size_t build_id_want;
    int build_id_seen;       /* the length item came; 2: too long */
};

/* Starts @a o from an OBJECT_LOAD record. */
void fr_object_rec_start(struct fr_object_rec *o,
                         const struct flightrec_record *r);
/* Takes an OBJECT_PATH or OBJECT_BUILD_ID item of the record @a o (data
 * words of @a word_bytes); other records are not taken.  Returns 1 if
 * taken. */
int fr_object_rec_take(struct fr_object_rec *o,
                       const struct flightrec_record *r, size_t word_bytes);

/* What the file at @a path says of itself when loaded: the bytes its
 * PT_LOAD segments span and whether it is position-independent (ET_DYN).
 * Returns 0, or -1 if it is not a regular, readable ELF file. */
int fr_object_file_info(const char *path, uint64_t *memsz, int *is_pic);

/* An OBJECT_LOAD, OBJECT_PATH or OBJECT_BUILD_ID item of a flightrec
 * stream (RTEMS streams number their events otherwise). */
static inline int fr_is_object_record(const struct flightrec_record *r)
{
    return r->type == FLIGHTREC_RECORD_EVENT &&
           r->event >= FLIGHTREC_EV_OBJECT_LOAD &&
           r->event <= FLIGHTREC_EV_OBJECT_BUILD_ID;
}

/* Where messages go: one line each, without the "flightrec: " prefix and
 * without a line end; NULL: standard error. */
typedef void (*fr_symbols_warn_fn)(void *arg, const char *message);

/* @a word_bytes: the stream's data word size (4 or 8).  NULL if out of
 * memory. */
struct fr_symbols *fr_symbols_create(size_t word_bytes,
                                     fr_symbols_warn_fn warn, void *arg);
void fr_symbols_destroy(struct fr_symbols *s);

/* Takes the OBJECT_* items among the records (all records may be passed;
 * others are ignored). */
void fr_symbols_record(struct fr_symbols *s, const struct flightrec_record *r);

/* The name of the function at @a address ("name", or "name+0x10" inside
 * it), or NULL if it cannot be named.  Valid until the next call. */
const char *fr_symbols_name(struct fr_symbols *s, uint64_t address);

/* The objects recorded so far, for the CTF statedump: returns 0 and fills
 * the outputs for object @a index, -1 past the last. */
int fr_symbols_object(const struct fr_symbols *s, size_t index,
                      uint64_t *base, const char **path,
                      const unsigned char **build_id, size_t *build_id_len);

#endif
